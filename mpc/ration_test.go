package mpc

import (
	"fmt"
	"strings"
	"testing"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

// rationSettings crosses thetas and rations (q = 0 and 100% included),
// with two unrationed lopp settings of the same model beside them.
func rationSettings(m policy.Scorer) []policy.Setting {
	ss := []policy.Setting{policy.LOPP{Theta: 0.5, Model: m}, policy.AGE{A: 2}}
	for _, th := range []float64{0, 0.5, 1} {
		for _, q := range []int64{0, 20000, 250000, 333333, 1000000} {
			ss = append(ss, policy.LOPPRation{Theta: th, PPM: q, Model: m})
		}
	}
	return append(ss, policy.LOPP{Theta: 0, Model: m}, policy.OPP{PPM: 20000})
}

// TestRationEqualsSimulator checks the rationed lopp's engine against the
// simulator on random traces, every gen model, and with a trained model.
func TestRationEqualsSimulator(t *testing.T) {
	ss := rationSettings(testutil.TieScorer{})
	rng := testutil.Rand(testutil.Seed(t, 27))
	for n := 0; n < testutil.Count(300); n++ {
		checkEqual(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
	m := trainModel(t, smallGen(t, "mix", 97))
	trained := []policy.Setting{policy.LOPP{Theta: 0.1, Model: m}}
	for _, q := range []int64{10000, 50000, 200000} {
		trained = append(trained, policy.LOPPRation{PPM: q, Model: m}, policy.LOPPRation{Theta: 0.1, PPM: q, Model: m})
	}
	for _, model := range gen.Models {
		tr := smallGen(t, model, 5)
		checkEqual(t, "gen "+model, tr, ss)
		checkEqual(t, "gen "+model+", trained model", tr, trained)
	}
}

func TestRationRefusals(t *testing.T) {
	tr := smallGen(t, "mix", 1)
	ss := []policy.Setting{policy.LOPPRation{PPM: 20000, Model: testutil.TieScorer{}}}
	if _, err := Generate(t.Context(), tr.NewReader(), ss, Options{Sample: trace.Sample{PPM: 100000}}); err == nil || !strings.Contains(err.Error(), "sample") {
		t.Errorf("a rationed lopp on a sample: err %v, want a refusal naming the sample", err)
	}
	two := append(ss, policy.LOPPRation{PPM: 10000, Model: fakeScorer{}})
	if _, err := Generate(t.Context(), tr.NewReader(), two, Options{}); err == nil || !strings.Contains(err.Error(), "two different models") {
		t.Errorf("rations with two models: err %v", err)
	}
}

type fakeScorer struct{ testutil.TieScorer }
