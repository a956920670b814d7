package mpc

import (
	"fmt"
	"testing"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

func idleSettings() []policy.Setting {
	ss := []policy.Setting{policy.AGE{A: 3}, policy.LOPP{Theta: 0.5, Model: testutil.TieScorer{}}}
	for _, th := range []float64{0, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 1} {
		ss = append(ss, policy.LOPPIdle{Theta: th, Model: testutil.IdleScorer{}})
	}
	return append(ss, policy.OPP{PPM: 50000})
}

// TestIdleEqualsSimulator checks the idle-time lopp's engine against the
// simulator, every per-window array, on random traces and every gen model
// (120 windows: gaps past the feature's cap of 64).
func TestIdleEqualsSimulator(t *testing.T) {
	ss := idleSettings()
	rng := testutil.Rand(testutil.Seed(t, 29))
	for n := 0; n < testutil.Count(400); n++ {
		checkEqual(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
	for _, model := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, 300, 120, 6
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		checkEqual(t, "gen "+model, tr, ss)
	}
}
