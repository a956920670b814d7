package sim

import (
	"fmt"
	"sort"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// naiveLRU is lru written from docs/policies.md alone, in the plainest
// way: maps of page states, every window's events in SPEC order, then the
// capacity: the alive resident pages that outlive the window sorted most
// recent first (later last touch, later touch before it with none
// lowest, smaller page ID), all past the limit reclaimed.
func naiveLRU(tr *trace.Trace, limit func(peak int64) int64) *result.Result {
	return naiveCapacity(tr, func(_ int, peak int64, _ *result.Result) int64 { return limit(peak) })
}

// naiveCapacity is naiveLRU with the limit of window k named after k's
// counts (r holds them, windows 0..k) by limit: a controller's.
func naiveCapacity(tr *trace.Trace, limit func(k int, peak int64, r *result.Result) int64) *result.Result {
	type pg struct {
		alive, resident bool
		last, before    int // before: the touch before last in the life, -1 if none
	}
	W := len(tr.Windows)
	r := &result.Result{Promotions: make([]int64, W), Accessed: make([]int64, W), PageSize: int64(tr.Header.PageSize),
		SavedPerWindow: make([]int64, W), AlivePerWindow: make([]int64, W)}
	ps := map[uint32]*pg{}
	get := func(id uint32) *pg {
		if ps[id] == nil {
			ps[id] = &pg{}
		}
		return ps[id]
	}
	var peak int64
	for k, win := range tr.Windows {
		r.Accessed[k] = int64(len(win.Accessed))
		accessed := map[uint32]bool{}
		for _, id := range win.Accessed {
			accessed[id] = true
			p := get(id)
			if p.alive {
				if !p.resident {
					r.Promotions[k]++
				}
				p.before = p.last
			} else {
				p.alive, p.before = true, -1
			}
			p.last, p.resident = k, true
		}
		for _, id := range win.Born {
			if p := get(id); !p.alive && !accessed[id] {
				p.alive, p.resident, p.last, p.before = true, true, k, -1
			}
		}
		freed := map[uint32]bool{}
		for _, id := range win.Freed {
			freed[id] = true
		}
		var cands []uint32
		for id, p := range ps {
			if !p.alive {
				continue
			}
			r.AlivePerWindow[k]++
			if !p.resident {
				r.SavedPerWindow[k]++
			} else if !freed[id] {
				cands = append(cands, id)
			}
		}
		peak = max(peak, r.AlivePerWindow[k])
		sort.Slice(cands, func(i, j int) bool {
			a, b := ps[cands[i]], ps[cands[j]]
			if a.last != b.last {
				return a.last > b.last
			}
			if a.before != b.before {
				return a.before > b.before
			}
			return cands[i] < cands[j]
		})
		c := limit(k, peak, r)
		for n, id := range cands {
			if int64(n) >= c {
				ps[id].resident = false
			}
		}
		for _, id := range win.Freed {
			if p := get(id); p.alive {
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

// TestLRUEqualsNaive: the simulator's lru equals the naive one on random
// traces, for page counts and shares of the peak.
func TestLRUEqualsNaive(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 27))
	var ss []policy.LRU
	for _, c := range []int64{0, 1, 2, 3, 5, 8, policy.Inf} {
		ss = append(ss, policy.LRU{C: c})
	}
	for _, ppm := range []int64{0, 250000, 333333, 500000, 900000, policy.MaxPPM} {
		ss = append(ss, policy.LRU{SharePPM: ppm, Share: true})
	}
	for n := 0; n < testutil.Count(1500); n++ {
		tr := testutil.RandomTrace(rng)
		for _, s := range ss {
			want := naiveLRU(tr, func(peak int64) int64 {
				if s.Share {
					return s.SharePPM * peak / 1_000_000
				}
				return s.C
			})
			want.Policy, want.Params = "lru", s.Params()
			compare(t, fmt.Sprintf("trace %d, %s", n, policy.String(s)), want, Run(tr, s))
		}
	}
}

// TestLRUExample: SPEC section 4's trace under lru:C=1, worked by hand.
// Page 1 is accessed in every window and, touched last with the latest
// touch before, always ranks first; it alone stays. Every other page is
// reclaimed at the end of the window of each of its touches, so every gap
// saves its whole idle length (32, as vmin:T=0) and every access of an
// alive page but 1's is a promotion: 2 in window 2, 3 in 5, 2 in 7, 6 in
// 9 (6's access in 3 and 5's in 1 are first touches).
func TestLRUExample(t *testing.T) {
	tr := testutil.ReadTextTrace(t, "../testdata/example.txt")
	r := Run(tr, policy.LRU{C: 1})
	if got, want := fmt.Sprint(r.Promotions), "[0 0 1 0 0 1 0 1 0 1]"; got != want {
		t.Errorf("promotions %s, want %s", got, want)
	}
	if r.Saved != 32 {
		t.Errorf("saved %d, want 32", r.Saved)
	}
}
