package sim

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// naiveRation is the per-window ration written from docs/lopp.md alone: at
// the end of each window the candidates (resident, touched in the window,
// score >= theta) sorted by score, highest first, then page, of which the
// first q*|A_k| div 1e6 are reclaimed.
func naiveRation(t *trace.Trace, s policy.LOPPRation) *result.Result { return naiveRationTies(t, s, 1) }

// naiveRationTies is naiveRation with ties of score broken by tie*(page
// order): 1 is the rule, -1 the higher page first (a mutation).
func naiveRationTies(t *trace.Trace, s policy.LOPPRation, tie int) *result.Result {
	return naiveRun(t, s.Params(), func(k int, accessed int64, res []naivePage) []bool {
		type cand struct {
			i     int
			score float64
		}
		var cs []cand
		for i := range res {
			if res[i].last != k {
				continue
			}
			if sc := s.Model.Score(res[i].features()); sc >= s.Theta {
				cs = append(cs, cand{i, sc})
			}
		}
		slices.SortStableFunc(cs, func(a, b cand) int {
			switch {
			case a.score > b.score:
				return -1
			case a.score < b.score:
				return 1
			}
			return tie * (res[a.i].id - res[b.i].id)
		})
		out := make([]bool, len(res))
		budget := int(s.PPM * accessed / 1_000_000)
		for i, c := range cs {
			if i < budget {
				out[c.i] = true
			}
		}
		return out
	})
}

func rationSettings() []policy.LOPPRation {
	var ss []policy.LOPPRation
	for _, th := range []float64{0, 0.5, 1} {
		for _, q := range []int64{0, 100000, 250000, 333333, 500000, 1000000} {
			ss = append(ss, policy.LOPPRation{Theta: th, PPM: q, Model: testutil.TieScorer{}})
		}
	}
	return ss
}

// TestRationEqualsNaive checks the simulator's rationed L-OPP against the
// naive implementation on random traces and every gen model.
func TestRationEqualsNaive(t *testing.T) {
	checkNaive(t, 26, 30, rationSettings(), naiveRation)
}

// TestRationCanFail checks that the naive implementation tells a ration
// apart from its neighbours: on a gen trace, q = 2% and theta = 0 differs
// from the unrationed lopp:theta=0 and from a ration breaking ties the
// other way (as the higher page first).
func TestRationCanFail(t *testing.T) {
	tr := GenTrace(t, "mix", 400, 30, 3)
	s := policy.LOPPRation{PPM: 20000, Model: testutil.TieScorer{}}
	want := naiveRation(tr, s)
	if got := Run(tr, s.Unrationed()); got.Saved == want.Saved && slices.Equal(got.Promotions, want.Promotions) {
		t.Errorf("the ration at 2%% equals the unrationed lopp: the test cannot tell them apart")
	}
	got := Run(tr, s)
	if !cmp.Equal(got, want) {
		t.Errorf("simulator differs from the naive ration")
	}
	if cmp.Equal(got, naiveRationTies(tr, s, -1)) {
		t.Errorf("the ration breaking ties to the higher page equals the rule: the test cannot tell them apart")
	}
}
