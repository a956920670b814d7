package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// naivePage is what the naive implementations know of a resident alive
// page at the end of a window.
type naivePage struct {
	id     int
	last   int   // the window of its last touch
	priors []int // its life's prior reuse distances, oldest first
}

// features returns the page's six features, written from docs/lopp.md: the
// last six prior reuse distances, most recent first, -1 where missing.
func (p *naivePage) features() []float64 {
	x := make([]float64, policy.NumFeatures)
	for i := range x {
		x[i] = -1
		if n := len(p.priors); i < n {
			x[i] = float64(p.priors[n-1-i])
		}
	}
	return x
}

// naiveRun simulates the trace's events page by page, with its own lives
// (SPEC section 1, not the simulator's Life), and at the end of every
// window k asks decide which of the resident alive pages (in page order)
// are reclaimed, given |A_k|.
func naiveRun(t *trace.Trace, params string, decide func(k int, accessed int64, res []naivePage) []bool) *result.Result {
	W := len(t.Windows)
	type pg struct {
		alive, resident bool
		last            int
		priors          []int
	}
	pages := make([]pg, len(t.Pages))
	r := &result.Result{
		Policy: "lopp", Params: params, PageSize: int64(t.Header.PageSize),
		Promotions: make([]int64, W), Accessed: make([]int64, W),
		SavedPerWindow: make([]int64, W), AlivePerWindow: make([]int64, W),
	}
	for k, win := range t.Windows {
		r.Accessed[k] = int64(len(win.Accessed))
		for _, id := range win.Accessed {
			p := &pages[id]
			if p.alive {
				if !p.resident {
					r.Promotions[k]++
				}
				p.priors = append(p.priors, k-p.last)
			} else {
				p.alive, p.priors = true, nil
			}
			p.resident, p.last = true, k
		}
		for _, id := range win.Born {
			if p := &pages[id]; !p.alive {
				p.alive, p.resident, p.last, p.priors = true, true, k, nil
			}
		}
		var res []naivePage
		for id := range pages {
			p := &pages[id]
			if !p.alive {
				continue
			}
			r.AlivePerWindow[k]++
			if !p.resident {
				r.SavedPerWindow[k]++
				continue
			}
			res = append(res, naivePage{id, p.last, p.priors})
		}
		for i, out := range decide(k, r.Accessed[k], res) {
			if out {
				pages[res[i].id].resident = false
			}
		}
		for _, id := range win.Freed {
			if p := &pages[id]; p.alive {
				p.alive, p.resident = false, false
			}
		}
	}
	for k := range W {
		r.Saved += r.SavedPerWindow[k]
		r.Alive += r.AlivePerWindow[k]
	}
	return r
}

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

func rationSettings() []policy.Setting {
	var ss []policy.Setting
	for _, th := range []float64{0, 0.5, 1} {
		for _, q := range []int64{0, 100000, 250000, 333333, 500000, 1000000} {
			ss = append(ss, policy.LOPPRation{Theta: th, PPM: q, Model: testutil.TieScorer{}})
		}
	}
	return ss
}

// checkNaive runs ss in the simulator on random traces and every gen model
// (at windows windows) and compares each setting with naive.
func checkNaive(t *testing.T, seed uint64, windows int, ss []policy.Setting, naive func(*trace.Trace, policy.Setting) *result.Result) {
	t.Helper()
	check := func(name string, tr *trace.Trace) {
		t.Helper()
		got, err := RunAll(t.Context(), tr, ss, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range ss {
			if d := cmp.Diff(naive(tr, s), got[i]); d != "" {
				t.Fatalf("%s, %s: naive and simulator differ (-naive +sim):\n%s", name, policy.String(s), d)
			}
		}
	}
	rng := testutil.Rand(testutil.Seed(t, seed))
	for n := 0; n < testutil.Count(600); n++ {
		check(fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng))
	}
	for _, model := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, 300, windows, 3
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		check("gen "+model, tr)
	}
}

// TestRationEqualsNaive checks the simulator's rationed L-OPP against the
// naive implementation on random traces and every gen model.
func TestRationEqualsNaive(t *testing.T) {
	checkNaive(t, 26, 30, rationSettings(), func(tr *trace.Trace, s policy.Setting) *result.Result {
		return naiveRation(tr, s.(policy.LOPPRation))
	})
}

// TestRationCanFail checks that the naive implementation tells a ration
// apart from its neighbours: on a gen trace, q = 2% and theta = 0 differs
// from the unrationed lopp:theta=0 and from a ration breaking ties the
// other way (as the higher page first).
func TestRationCanFail(t *testing.T) {
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = "mix", 400, 30, 3
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
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
