package sim

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// testSettings covers every policy with edge values: A=0, T=0, r=0,
// r=100%, P=0 and P=inf.
func testSettings() []policy.Setting {
	var ss []policy.Setting
	for _, a := range []int{0, 1, 2, 3, 5, 20} {
		ss = append(ss, policy.AGE{A: a})
	}
	for _, t := range []int{0, 1, 2, 5} {
		ss = append(ss, policy.VMIN{T: t})
	}
	for _, r := range []int64{0, 10000, 100000, 250000, 333333, 500000, 1000000} {
		ss = append(ss, policy.OPP{PPM: r})
	}
	for _, p := range []int{0, 1, 3, policy.Inf} {
		for _, w := range []int{0, 1, 2} {
			ss = append(ss, policy.PAW{P: p, Wait: w})
		}
		for _, a := range []int{0, 1, 2} {
			ss = append(ss, policy.PACE{P: p, A: a})
		}
	}
	return ss
}

func compare(t *testing.T, name string, want, got *result.Result) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s: closed form and simulator differ (-closed form +sim):\n%s", name, d)
	}
}

func TestSimulatorEqualsClosedForms(t *testing.T) {
	seed := testutil.Seed(t, 2)
	rng := testutil.Rand(seed)
	for n := 0; n < testutil.Count(2500); n++ {
		tr := testutil.RandomTrace(rng)
		for _, s := range testSettings() {
			compare(t, fmt.Sprintf("trace %d, %s", n, policy.String(s)), cfRun(tr, s), Run(tr, s))
		}
	}
}

// TestProperties checks SPEC section 2's claims on random traces.
func TestProperties(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 3))
	for n := 0; n < testutil.Count(2000); n++ {
		tr := testutil.RandomTrace(rng)
		// AGE: promotions and savings non-increasing in A.
		var prev *result.Result
		for a := 0; a <= 15; a++ {
			r := Run(tr, policy.AGE{A: a})
			if prev != nil && (r.TotalPromotions() > prev.TotalPromotions() || r.Saved > prev.Saved) {
				t.Fatalf("trace %d: age A=%d promotions %d saved %d, A=%d promotions %d saved %d",
					n, a, r.TotalPromotions(), r.Saved, a-1, prev.TotalPromotions(), prev.Saved)
			}
			prev = r
		}
		// VMIN: savings non-increasing in T.
		prev = nil
		for T := 0; T <= 15; T++ {
			r := Run(tr, policy.VMIN{T: T})
			if prev != nil && r.Saved > prev.Saved {
				t.Fatalf("trace %d: vmin T=%d saved %d > T=%d saved %d", n, T, r.Saved, T-1, prev.Saved)
			}
			prev = r
		}
		// OPP: within budget in every window, and no other setting that
		// stays within the same budgets saves more.
		var others []*result.Result
		for _, s := range testSettings() {
			if _, ok := s.(policy.OPP); !ok {
				others = append(others, Run(tr, s))
			}
		}
		for _, ppm := range []int64{0, 50000, 200000, 500000, 1000000} {
			o := policy.OPP{PPM: ppm}
			r := Run(tr, o)
			for w := range r.Promotions {
				if r.Promotions[w] > o.Budget(r.Accessed[w]) {
					t.Fatalf("trace %d: opp %s window %d: %d promotions over budget %d", n, o.Params(), w, r.Promotions[w], o.Budget(r.Accessed[w]))
				}
			}
			for _, x := range others {
				within := true
				for w := range x.Promotions {
					if x.Promotions[w] > o.Budget(x.Accessed[w]) {
						within = false
						break
					}
				}
				if within && x.Saved > r.Saved {
					t.Fatalf("trace %d: %s:%s saves %d within opp %s's budgets, opp saves only %d", n, x.Policy, x.Params, x.Saved, o.Params(), r.Saved)
				}
			}
		}
	}
}

// TestClosedFormIsIndependent guards the test oracle itself: on a trace
// built by hand its numbers are the ones worked out on paper.
func TestClosedFormByHand(t *testing.T) {
	// Page 1 accessed in windows 0 and 3 and freed in 4; page 2 born in 1,
	// never accessed; W = 6.
	b := trace.NewBuilder(trace.Header{PageSize: 4096, Window: trace.DefaultWindow, Windows: 6})
	p1, p2 := trace.Page{Page: 1}, trace.Page{Page: 2}
	b.Add(0, trace.Access, p1)
	b.Add(1, trace.Birth, p2)
	b.Add(3, trace.Access, p1)
	b.Add(4, trace.Free, p1)
	tr := b.Trace()
	// Gaps: p1 closed (0, g=2), p1 open (3, e=5, g=1), p2 open (1, e=6, g=4).
	// L = 5 + 5 = 10. age A=1: closed saves 1 (promotion in 3), open
	// saves 0 and 3: S = 4.
	for _, r := range []*result.Result{cfRun(tr, policy.AGE{A: 1}), Run(tr, policy.AGE{A: 1})} {
		if r.Alive != 10 || r.Saved != 4 || r.TotalPromotions() != 1 || r.Promotions[3] != 1 {
			t.Fatalf("%+v", r)
		}
	}
}
