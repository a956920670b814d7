package mpc

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// lruSettings are lru's edge settings: page counts from 0 (every page
// reclaimed at every scan) past any trace's size, shares that round, and
// inf; mixed with other policies so that the window-reading engine shares
// the pass.
func lruSettings() []policy.Setting {
	var ss []policy.Setting
	for _, c := range []int64{0, 1, 2, 3, 4, 5, 7, 10, 1 << 40, policy.Inf} {
		ss = append(ss, policy.LRU{C: c})
	}
	for _, ppm := range []int64{0, 1, 125000, 333333, 500000, 750000, 999999, policy.MaxPPM} {
		ss = append(ss, policy.LRU{SharePPM: ppm, Share: true})
	}
	return ss
}

// TestLRUEqualsSimulatorRandom: lru's one-pass curve (stack distances)
// equals the simulator on random traces, which have ties within windows,
// births of new and of alive pages, frees, lives after frees and empty
// windows; other policies share the pass.
func TestLRUEqualsSimulatorRandom(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 27))
	ss := append(lruSettings(), policy.AGE{A: 1}, policy.OPP{PPM: 250000}, policy.PACE{P: 2, A: 1})
	for n := 0; n < testutil.Count(800); n++ {
		checkEqualAll(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
}

// TestLRUEqualsSimulatorGen: the same on every gen model, over lru's
// default grid and page counts around the traces' sizes, and on a
// binary file (renumbered slots: the Fenwick tree outgrows its first
// size).
func TestLRUEqualsSimulatorGen(t *testing.T) {
	for _, model := range gen.Models {
		for seed := uint64(1); seed <= 2; seed++ {
			tr := smallGen(t, model, seed)
			ss := append(policy.DefaultGrid("lru", tr.Header.Window), lruSettings()...)
			for _, c := range []int64{50, 100, 200, 300, 400, 599, 600} {
				ss = append(ss, policy.LRU{C: c})
			}
			checkEqualAll(t, fmt.Sprintf("gen %s seed %d", model, seed), tr, append(ss, policy.AGE{A: 2}))
		}
	}
}

// TestLRUAgeZero: lru with no room is age:A=0 (every gap reclaimed at the
// end of its touch's window); a limit as large as the trace never
// reclaims.
func TestLRUAgeZero(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 28))
	for n := 0; n < testutil.Count(300); n++ {
		tr := testutil.RandomTrace(rng)
		rs, err := Generate(context.Background(), tr.NewReader(),
			[]policy.Setting{policy.LRU{C: 0}, policy.AGE{A: 0}, policy.LRU{C: int64(len(tr.Pages))}, policy.LRU{SharePPM: policy.MaxPPM, Share: true}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rs[0].Saved != rs[1].Saved || fmt.Sprint(rs[0].Promotions) != fmt.Sprint(rs[1].Promotions) {
			t.Fatalf("trace %d: lru:C=0 saved %d %v, age:A=0 %d %v", n, rs[0].Saved, rs[0].Promotions, rs[1].Saved, rs[1].Promotions)
		}
		for _, r := range rs[2:] {
			if r.Saved != 0 || r.TotalPromotions() != 0 {
				t.Fatalf("trace %d: %s:%s reclaimed: saved %d", n, r.Policy, r.Params, r.Saved)
			}
		}
	}
}

// TestLRUNotOnASample: a capacity ranks every page, so lru refuses a
// sampled run and a censored one with a clear error.
func TestLRUNotOnASample(t *testing.T) {
	tr := smallGen(t, "mix", 1)
	for _, o := range []Options{{Sample: trace.Sample{PPM: 100000}}, {Censor: true}} {
		_, err := Generate(context.Background(), tr.NewReader(), []policy.Setting{policy.LRU{C: 10}}, o)
		if err == nil || !strings.Contains(err.Error(), "lru runs on every page") {
			t.Fatalf("%+v: err = %v", o, err)
		}
	}
}

// checkEqualAll is checkEqual with the simulator running every setting in
// one pass (sim.RunAll).
func checkEqualAll(t *testing.T, name string, tr *trace.Trace, ss []policy.Setting) {
	t.Helper()
	got, err := Generate(context.Background(), tr.NewReader(), ss, Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, err := sim.RunAll(context.Background(), tr, ss, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ss {
		if d := cmp.Diff(want[i], got[i], cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s, %s: generator differs from simulator (-sim +mpc):\n%s", name, policy.String(s), d)
		}
	}
}
