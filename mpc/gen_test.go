package mpc

import (
	"fmt"
	"testing"

	"mdk/gbdt"
	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/lopp"
	"mdk/policy"
	"mdk/trace"
)

// smallGen returns a small trace of each gen model.
func smallGen(t *testing.T, model string, seed uint64) *trace.Trace {
	t.Helper()
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, 600, 40, seed
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatalf("gen %s: %v", model, err)
	}
	return tr
}

// trainModel trains a small L-OPP model on the first half of tr.
func trainModel(t *testing.T, tr *trace.Trace) *gbdt.Model {
	t.Helper()
	d, err := lopp.Dataset(tr.NewReader(), 20000, lopp.Span{From: 0, To: len(tr.Windows) / 2})
	if err != nil {
		t.Fatal(err)
	}
	cfg := gbdt.DefaultConfig
	cfg.Rounds, cfg.MaxDepth = 8, 4
	m, err := gbdt.Train(d.X, lopp.NumFeatures, d.Y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func loppSettings(m *gbdt.Model) []policy.Setting {
	var ss []policy.Setting
	for _, th := range []float64{0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1} {
		ss = append(ss, policy.LOPP{Theta: th, Model: m})
	}
	return ss
}

// TestGeneratorEqualsSimulatorGen checks every policy, L-OPP included (with
// a fixed model), on every gen model.
func TestGeneratorEqualsSimulatorGen(t *testing.T) {
	m := trainModel(t, smallGen(t, "mix", 99))
	for _, model := range gen.Models {
		for seed := uint64(1); seed <= 3; seed++ {
			tr := smallGen(t, model, seed)
			ss := append(edgeSettings(), loppSettings(m)...)
			ss = append(ss, policy.DefaultGrid("pace", tr.Header.Window)...)
			checkEqual(t, fmt.Sprintf("gen %s seed %d", model, seed), tr, ss)
		}
	}
}

// TestLOPPEqualsSimulatorRandom checks L-OPP on random traces.
func TestLOPPEqualsSimulatorRandom(t *testing.T) {
	m := trainModel(t, smallGen(t, "mix", 98))
	ss := loppSettings(m)
	rng := testutil.Rand(testutil.Seed(t, 8))
	for n := 0; n < testutil.Count(500); n++ {
		checkEqual(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
}
