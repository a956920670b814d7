package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/tier"
	"mdk/tune"
)

// TestSenpaiAndLRUEverywhere runs lru and senpai through mdk sim, mdk mpc
// and mdk tune on SPEC section 4's trace: each prints the simulator's
// numbers (sim.Run for lru, sim.RunControlled for senpai), and senpai
// without a tier is a usage error that says what is missing.
func TestSenpaiAndLRUEverywhere(t *testing.T) {
	const path = "../../testdata/example.txt"
	const spec = "senpai:min_size=0"
	tr := testutil.ReadTextTrace(t, path)
	zram, ok := tier.Builtin("zram")
	if !ok {
		t.Fatal("no zram tier")
	}
	s, err := tune.ParseSenpai(spec, zram)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.RunControlled(context.Background(), tr, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Switches) < 2 {
		t.Fatalf("senpai switches %d times on the example: the test exercises too little", len(want.Switches))
	}
	rec := want.Result.Record(false)

	code, _, errOut := run(t, "", "sim", path, spec)
	if code != 2 || !strings.Contains(errOut, "it needs a tier (--tier") {
		t.Errorf("sim without --tier: exit %d, %q", code, errOut)
	}
	code, out, errOut := run(t, "", "sim", path, spec, "--tier", "zram", "--json")
	if code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errOut)
	}
	var got struct {
		result.Record
		Settings []string `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.SavedPageWindows != rec.SavedPageWindows || got.Promotions != rec.Promotions || strings.Join(got.Settings, " ") != strings.Join(want.Settings, " ") {
		t.Errorf("sim --json: %+v, want %+v and settings %v", got, rec, want.Settings)
	}

	code, out, errOut = run(t, "", "mpc", path, "-p", "lru:C=1|3", "-p", spec, "--tier", "zram", "--csv")
	if code != 0 {
		t.Fatalf("mpc: exit %d: %s", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var wantRows [][]string
	for _, c := range []int64{1, 3} {
		wantRows = append(wantRows, sim.Run(tr, policy.LRU{C: c}).Record(false).CSVRow())
	}
	wantRows = append(wantRows, rec.CSVRow())
	var mine [][]string // without opp at senpai's realised max_pr
	for _, r := range rows[1:] {
		if r[0] != "opp" {
			mine = append(mine, r)
		}
	}
	if len(mine) != len(wantRows) {
		t.Fatalf("mpc --csv: %d rows, want %d", len(mine), len(wantRows))
	}
	for i, w := range wantRows {
		if g := strings.Join(mine[i][:len(w)], ","); g != strings.Join(w, ",") {
			t.Errorf("mpc --csv row %d: %s, want %s", i, g, strings.Join(w, ","))
		}
	}
	if !strings.Contains(errOut, "probes") {
		t.Errorf("mpc: stderr %q does not count senpai's probes", errOut)
	}

	code, out, errOut = run(t, "", "tune", path, "--slo", "max_pr<=50%", "-p", spec, "--tier", "zram", "--json")
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errOut)
	}
	var rep tune.Report
	if err := json.Unmarshal([]byte(out), &struct {
		Controllers *[]tune.ControllerChoice `json:"controllers"`
	}{&rep.Controllers}); err != nil {
		t.Fatal(err)
	}
	ev := want.Result.Restrict(5, 10)
	if len(rep.Controllers) != 1 || rep.Controllers[0].Eval.SavedPageWindows != ev.Saved || rep.Controllers[0].SwitchesTotal != len(want.Switches) {
		t.Errorf("tune --json controllers %+v, want eval saved %d and %d switches", rep.Controllers, ev.Saved, len(want.Switches))
	}
	if c := rep.Controllers[0]; c.Fixed == nil || !strings.HasPrefix(c.Fixed.Spec, "lru:") {
		t.Errorf("tune: senpai's fixed counterpart %+v, want an lru setting", c.Fixed)
	}
}
