package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// naiveIdle is idle-time L-OPP written from docs/lopp.md alone: at the end
// of every window each resident alive page is scored from its last touch's
// features and min(k - last touch, 64); it is reclaimed if the score is at
// least theta.
func naiveIdle(t *trace.Trace, s policy.LOPPIdle) *result.Result {
	return naiveRun(t, s.Params(), func(k int, _ int64, res []naivePage) []bool {
		out := make([]bool, len(res))
		for i := range res {
			x := append(res[i].features(), float64(min(k-res[i].last, 64)))
			out[i] = s.Model.Score(x) >= s.Theta
		}
		return out
	})
}

func idleSettings() []policy.LOPPIdle {
	var ss []policy.LOPPIdle
	for _, th := range []float64{0, 0.3, 0.7, 0.9, 1} {
		ss = append(ss, policy.LOPPIdle{Theta: th, Model: testutil.IdleScorer{}})
	}
	return ss
}

// TestIdleEqualsNaive checks the simulator's idle-time L-OPP against the
// naive implementation on random traces and every gen model (whose gaps
// run past the 64-window cap of the idle feature at 120 windows).
func TestIdleEqualsNaive(t *testing.T) {
	checkNaive(t, 28, 120, idleSettings(), naiveIdle)
}

// TestIdleCanFail: the naive implementation tells idle-time decisions
// apart from decisions at the touch only, and from an uncapped idle time.
func TestIdleCanFail(t *testing.T) {
	tr := GenTrace(t, "phases", 300, 120, 4)
	s := policy.LOPPIdle{Theta: 1, Model: testutil.IdleScorer{}}
	want := naiveIdle(tr, s)
	atTouch := naiveRun(tr, s.Params(), func(k int, _ int64, res []naivePage) []bool {
		out := make([]bool, len(res))
		for i := range res {
			out[i] = res[i].last == k && s.Model.Score(append(res[i].features(), 0)) >= s.Theta
		}
		return out
	})
	uncapped := naiveRun(tr, s.Params(), func(k int, _ int64, res []naivePage) []bool {
		out := make([]bool, len(res))
		for i := range res {
			out[i] = s.Model.Score(append(res[i].features(), float64(k-res[i].last))) >= s.Theta
		}
		return out
	})
	if cmp.Equal(want, atTouch) {
		t.Errorf("the idle-time rule equals decisions at the touch only: the test cannot tell them apart")
	}
	if cmp.Equal(want, uncapped) {
		t.Errorf("the idle-time rule equals one without the cap: the test cannot tell them apart")
	}
	if got := Run(tr, s); !cmp.Equal(got, want) {
		t.Errorf("simulator differs from the naive idle-time rule")
	}
}
