package sim

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// The naive implementations' shared set-up (the idle-time and rationed
// L-OPP brute forces): their page model, their run, the equality check
// over random and generated traces, and the small gen traces.

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

// checkNaive runs ss in the simulator on random traces and every gen model
// (at windows windows) and compares each setting with naive.
func checkNaive[S policy.Setting](t *testing.T, seed uint64, windows int, ss []S, naive func(*trace.Trace, S) *result.Result) {
	t.Helper()
	set := make([]policy.Setting, len(ss))
	for i, s := range ss {
		set[i] = s
	}
	check := func(name string, tr *trace.Trace) {
		t.Helper()
		got, err := RunAll(t.Context(), tr, set, nil)
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
		check("gen "+model, GenTrace(t, model, 300, windows, 3))
	}
}

// GenTrace returns gen's model at pages x windows (30 s) with seed, the
// other parameters gen's defaults: the small generated traces of the
// package's brute-force tests (exported for the external ones).
func GenTrace(t *testing.T, model string, pages, windows int, seed uint64) *trace.Trace {
	t.Helper()
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, pages, windows, seed
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
