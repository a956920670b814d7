package mpc

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// edgeSettings covers every policy with edge values, several grids that are
// not full cartesian products, and duplicates.
func edgeSettings() []policy.Setting {
	var ss []policy.Setting
	for _, a := range []int{0, 1, 2, 3, 5, 20, 1, 5000, policy.Inf} {
		ss = append(ss, policy.AGE{A: a})
	}
	for _, t := range []int{0, 1, 2, 5, 0, 9000, policy.Inf} {
		ss = append(ss, policy.VMIN{T: t})
	}
	for _, r := range []int64{0, 1, 10000, 100000, 250000, 333333, 500000, 1000000} {
		ss = append(ss, policy.OPP{PPM: r})
	}
	for _, p := range []int{0, 1, 3, policy.Inf, 5000} {
		for _, w := range []int{0, 1, 2, 4500} {
			ss = append(ss, policy.PAW{P: p, Wait: w})
		}
		for _, a := range []int{0, 1, 2, 6000, policy.Inf} {
			ss = append(ss, policy.PACE{P: p, A: a})
		}
	}
	ss = append(ss, policy.PACE{P: 2, A: 7}, policy.PAW{P: 7, Wait: 3})
	return ss
}

// checkEqual runs the generator and the simulator for every setting and
// fails on the first difference.
func checkEqual(t *testing.T, name string, tr *trace.Trace, ss []policy.Setting) {
	t.Helper()
	got, err := Generate(context.Background(), tr.NewReader(), ss, Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i, s := range ss {
		want := sim.Run(tr, s)
		if d := cmp.Diff(want, got[i], cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s, %s: generator differs from simulator (-sim +mpc):\n%s", name, policy.String(s), d)
		}
	}
}

func TestGeneratorEqualsSimulatorRandom(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 4))
	ss := edgeSettings()
	for n := 0; n < testutil.Count(2500); n++ {
		checkEqual(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
}

// TestGeneratorOnePolicyAtATime checks that a run's results do not depend on
// which other policies share the pass.
func TestGeneratorOnePolicyAtATime(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 5))
	for n := 0; n < testutil.Count(100); n++ {
		tr := testutil.RandomTrace(rng)
		all, err := Generate(context.Background(), tr.NewReader(), edgeSettings(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range edgeSettings() {
			one, err := Generate(context.Background(), tr.NewReader(), []policy.Setting{s}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(all[i], one[0]); d != "" {
				t.Fatalf("trace %d %s: alone differs from together:\n%s", n, policy.String(s), d)
			}
		}
	}
}

func TestGeneratorEmptyTrace(t *testing.T) {
	tr := trace.NewBuilder(trace.DefaultHeader()).Trace()
	got, err := Generate(context.Background(), tr.NewReader(), edgeSettings(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.Windows() != 0 || r.Saved != 0 || r.Savings() != 0 || r.MaxPR() != 0 {
			t.Fatalf("%+v", r)
		}
	}
	_ = result.Stats
}
