package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
)

// TestControllersSentence runs gswap and damos through mdk mpc on SPEC
// section 4's trace and checks the sentence of each: the controller's
// savings and max_pr as sim.RunControlled has them, OPP's best savings at
// that max_pr and age's best (its default grid, run for the sentence
// though no age setting is asked for, and kept out of the table).
func TestControllersSentence(t *testing.T) {
	const path = "../../testdata/example.txt"
	tr := testutil.ReadTextTrace(t, path)
	specs := []string{"damos", "damos:min_age=0,quota=1", "gswap:budget=50%,min=1,K=50,S=0,history=3"}
	args := []string{"mpc", path, "-p", "opp"}
	for _, s := range specs {
		args = append(args, "-p", s)
	}
	code, out, errOut := run(t, "", args...)
	if code != 0 {
		t.Fatalf("mpc: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "\nage ") {
		t.Errorf("age's reference grid is printed in the table:\n%s", out)
	}
	for _, s := range specs {
		c, err := policy.ParseController(s, policy.ControllerOptions{Window: tr.Header.Window})
		if err != nil {
			t.Fatal(err)
		}
		got, err := sim.RunControlled(context.Background(), tr, c)
		if err != nil {
			t.Fatal(err)
		}
		r := got.Result
		x := r.MaxPR()
		var ages, opps []*result.Result
		for _, a := range policy.DefaultGrid("age", tr.Header.Window) {
			ages = append(ages, sim.Run(tr, a))
		}
		for _, o := range append(policy.DefaultGrid("opp", tr.Header.Window), policy.OPP{PPM: int64(x * policy.MaxPPM)}) {
			opps = append(opps, sim.Run(tr, o))
		}
		opp := result.Best(opps, result.MaxPR, x)
		age := result.Best(ages, result.MaxPR, x)
		name := s
		if !strings.Contains(s, ":") {
			name += " at its defaults"
		}
		want := fmt.Sprintf("%s saves %.2f%% at max_pr %.4f%%; OPP at %.4f%% saves %.2f%%; age at its best (%s), %.2f%%\n",
			name, 100*r.Savings(), 100*x, 100*x, 100*opp.Savings(), age.Params, 100*age.Savings())
		if !strings.Contains(out, want) {
			t.Errorf("mpc does not print %q:\n%s", want, out)
		}
		if len(got.Switches) == 0 {
			t.Errorf("%s never switches on the example", s)
		}
	}
}

// TestControllersSentenceOnTier: with --tier on a promotion-rate axis mdk
// mpc prints the controllers' points and sentences after the tier's table,
// the same as without a tier, and senpai's, which needs one.
func TestControllersSentenceOnTier(t *testing.T) {
	const path = "../../testdata/example.txt"
	sentences := func(args ...string) []string {
		code, out, errOut := run(t, "", append([]string{"mpc", path}, args...)...)
		if code != 0 {
			t.Fatalf("mpc %v: exit %d: %s", args, code, errOut)
		}
		var s []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "controller ") || strings.Contains(l, " saves ") {
				s = append(s, l)
			}
		}
		return s
	}
	plain, tiered := sentences("-p", "damos"), sentences("-p", "damos", "--tier", "zram")
	if len(plain) != 2 || strings.Join(plain, "\n") != strings.Join(tiered, "\n") {
		t.Errorf("mdk mpc -p damos prints\n%s\nand with --tier zram\n%s", strings.Join(plain, "\n"), strings.Join(tiered, "\n"))
	}
	if s := sentences("-p", "senpai:min_size=0", "--tier", "zram"); len(s) != 2 || !strings.HasPrefix(s[1], "senpai:min_size=0 saves ") {
		t.Errorf("mdk mpc -p senpai:min_size=0 --tier zram prints %q, want its point and sentence", s)
	}
}
