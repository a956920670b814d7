package sim_test

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// naivePage is one page in the naive runs below.
type naivePage struct {
	alive, resident bool
	last            int
	before          int // the touch before last in the life, -1 if none
}

// naiveControlled runs a trace window by window with maps and full scans,
// SPEC section 1's life rules written out again: accesses (a promotion when
// the page is alive and absent; idle is the gap's g = k - last - 1, kept
// per access of an alive page), births of pages not alive and not accessed
// in the window, the counts, then decide (which gets the window, its
// outcome and every page, and returns the pages to reclaim), then frees.
// It returns the result and each window's setting as decide names it.
func naiveControlled(t *trace.Trace, decide func(k int, idle []int, o policy.Outcome, pages map[uint32]*naivePage) ([]uint32, string)) (*result.Result, []string) {
	W := len(t.Windows)
	r := &result.Result{PageSize: int64(t.Header.PageSize), Promotions: make([]int64, W), Accessed: make([]int64, W),
		SavedPerWindow: make([]int64, W), AlivePerWindow: make([]int64, W)}
	pages := map[uint32]*naivePage{}
	get := func(id uint32) *naivePage {
		if pages[id] == nil {
			pages[id] = &naivePage{}
		}
		return pages[id]
	}
	var settings []string
	for k := range W {
		w := &t.Windows[k]
		r.Accessed[k] = int64(len(w.Accessed))
		var idle []int
		accessed := map[uint32]bool{}
		for _, id := range w.Accessed {
			accessed[id] = true
			p := get(id)
			p.before = -1
			if p.alive {
				idle = append(idle, k-p.last-1)
				if !p.resident {
					r.Promotions[k]++
				}
				p.before = p.last
			}
			p.alive, p.resident, p.last = true, true, k
		}
		for _, id := range w.Born {
			if p := get(id); !accessed[id] && !p.alive {
				p.alive, p.resident, p.last, p.before = true, true, k, -1
			}
		}
		for _, p := range pages {
			if p.alive {
				r.AlivePerWindow[k]++
				if !p.resident {
					r.SavedPerWindow[k]++
				}
			}
		}
		o := policy.Outcome{Promotions: r.Promotions[k], Accessed: r.Accessed[k], Saved: r.SavedPerWindow[k], Alive: r.AlivePerWindow[k]}
		out, setting := decide(k, idle, o, pages)
		settings = append(settings, setting)
		for _, id := range out {
			pages[id].resident = false
		}
		for _, id := range w.Freed {
			if p := get(id); p.alive {
				p.alive, p.resident = false, false
			}
		}
	}
	for k := range W {
		r.Saved += r.SavedPerWindow[k]
		r.Alive += r.AlivePerWindow[k]
	}
	return r, settings
}

// residentIdle returns the resident alive pages idle at least a windows at
// k, by ID.
func residentIdle(k, a int, pages map[uint32]*naivePage) []uint32 {
	var out []uint32
	for id, p := range pages {
		if p.alive && p.resident && k-p.last >= a {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// naiveGswap is gswap from its docs/policies.md text: the working set the
// alive pages touched in the last min windows; the best threshold the
// smallest candidate T whose would-be promotions (accesses with g >= T)
// times a minute times 10^6 are at most budget x WSS x window, compared
// with big integers; the threshold the K-th percentile of the last history
// best thresholds (sorted ascending, position ceil(K n / 100), counted from
// 1); no reclaim until k+1 >= S; every resident page idle at least T
// reclaimed.
func naiveGswap(t *trace.Trace, budget int64, min, k, s, history int) (*result.Result, []string) {
	window := t.Header.Window
	var cands []int
	for _, x := range policy.DefaultGrid("age", window) {
		if a := x.(policy.AGE).A; a != policy.Inf && a >= min {
			cands = append(cands, a)
		}
	}
	var bests []int
	cur := "none"
	return naiveControlled(t, func(w int, idle []int, _ policy.Outcome, pages map[uint32]*naivePage) ([]uint32, string) {
		wss := int64(0)
		for _, p := range pages {
			if p.alive && w-p.last < min {
				wss++
			}
		}
		best := policy.Inf
		for _, c := range cands {
			n := 0
			for _, g := range idle {
				if g >= c {
					n++
				}
			}
			lhs := new(big.Int).Mul(big.NewInt(int64(n)), big.NewInt(int64(time.Minute)))
			lhs.Mul(lhs, big.NewInt(1_000_000))
			rhs := new(big.Int).Mul(big.NewInt(budget), big.NewInt(wss))
			rhs.Mul(rhs, big.NewInt(int64(window)))
			if lhs.Cmp(rhs) <= 0 {
				best = c
				break
			}
		}
		bests = append(bests, best)
		if w+1 < s {
			return nil, cur
		}
		h := append([]int(nil), bests[max(0, len(bests)-history):]...)
		sort.Ints(h)
		pos := int(math.Ceil(float64(k) * float64(len(h)) / 100)) // 1-based
		if pos < 1 {
			pos = 1
		}
		th := h[pos-1]
		cur = policy.SpecOf(policy.AGE{A: th})
		if th == policy.Inf {
			return nil, cur
		}
		return residentIdle(w, th, pages), cur
	})
}

// feedNaive is damon_feed_loop_next_input as its comment states it,
// next = max(last x ((goal - score)/goal + 1), min), on big integers, with
// the kernel's unsigned long limits: the result saturates at 2^64-1, and
// where last is not below ULONG_MAX / |goal - score| the
// compensation is last / goal x |goal - score| (the kernel's fallback).
func feedNaive(last, score uint64) uint64 {
	goal := big.NewInt(10000)
	if score == 10000 {
		return last
	}
	if score >= 20000 {
		return 10000
	}
	l, sc := new(big.Int).SetUint64(last), new(big.Int).SetUint64(score)
	diff := new(big.Int).Sub(goal, sc)
	diff.Abs(diff)
	// The kernel multiplies first when last < ULONG_MAX / diff, that is
	// when (last + 1) x diff still fits in 64 bits.
	var comp *big.Int
	if fits := new(big.Int).Mul(new(big.Int).Add(l, big.NewInt(1)), diff); fits.BitLen() <= 64 {
		comp = new(big.Int).Quo(new(big.Int).Mul(l, diff), goal)
	} else {
		comp = new(big.Int).Mul(new(big.Int).Quo(l, goal), diff)
	}
	next := new(big.Int)
	if score > 10000 {
		next.Sub(l, comp)
		if next.Cmp(goal) < 0 {
			next.Set(goal)
		}
	} else {
		next.Add(l, comp)
	}
	if next.BitLen() > 64 {
		return math.MaxUint64
	}
	return next.Uint64()
}

// naiveDamos is damos from its docs/policies.md text: at every window's
// end the effective quota in bytes (the size quota per window; with a goal
// the feedback loop's esz_bp / 10,000, started from max(0, 10,000) and fed
// the window's score, capped by the size quota), then the resident pages
// idle at least min_age, the least recently used first (the earliest last
// touch; the earlier touch before it, none first; the larger ID), at most
// quota / page size of them.
func naiveDamos(t *trace.Trace, minAge int, quotaBytesPerWindow uint64, goalPPM int64) (*result.Result, []string) {
	var eszBP uint64
	ps := uint64(t.Header.PageSize)
	return naiveControlled(t, func(k int, _ []int, o policy.Outcome, pages map[uint32]*naivePage) ([]uint32, string) {
		esz := quotaBytesPerWindow
		if goalPPM > 0 {
			cur := int64(0)
			if o.Accessed > 0 {
				cur = o.Promotions * 1_000_000 / o.Accessed
			}
			score := new(big.Int).Mul(big.NewInt(cur), big.NewInt(10000))
			score.Quo(score, big.NewInt(goalPPM))
			sc := uint64(math.MaxUint64)
			if score.IsUint64() {
				sc = score.Uint64()
			}
			eszBP = feedNaive(max(eszBP, 10000), sc)
			esz = eszBP / 10000
			if quotaBytesPerWindow != 0 && quotaBytesPerWindow < esz {
				esz = quotaBytesPerWindow
			}
		}
		due := residentIdle(k, minAge, pages)
		if esz == 0 {
			return due, policy.SpecOf(policy.AGE{A: minAge})
		}
		n := esz / ps
		sort.Slice(due, func(i, j int) bool {
			a, b := pages[due[i]], pages[due[j]]
			if a.last != b.last {
				return a.last < b.last
			}
			if a.before != b.before {
				return a.before < b.before
			}
			return due[i] > due[j]
		})
		if uint64(len(due)) > n {
			due = due[:n]
		}
		return due, fmt.Sprintf("age:A=%d,quota=%d", minAge, n)
	})
}

func runCtl(t *testing.T, tr *trace.Trace, c policy.Controller) *sim.Controlled {
	t.Helper()
	got, err := sim.RunControlled(context.Background(), tr, c)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameRun(t *testing.T, what string, got *sim.Controlled, want *result.Result, settings []string) {
	t.Helper()
	want.Policy, want.Params = got.Result.Policy, got.Result.Params
	if d := cmp.Diff(want, got.Result); d != "" {
		t.Fatalf("%s: (-naive +sim):\n%s", what, d)
	}
	if d := cmp.Diff(settings, got.Settings, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("%s: settings (-naive +sim):\n%s", what, d)
	}
}

// gswapCases are gswap's parameter sets for the brute force: budgets from
// none to all, short and long histories and delays, K from 1 to 100.
var gswapCases = []struct {
	budget          int64
	min, k, s, hist int
}{
	{2000, 4, 98, 10, 120}, {0, 1, 50, 0, 3}, {1_000_000, 2, 100, 1, 1}, {20000, 1, 1, 2, 5},
	{100000, 3, 90, 0, 8}, {5000, 2, 75, 4, 2},
}

// TestGswapEqualsNaive holds sim.RunControlled of gswap to naiveGswap on
// random traces (every SPEC section 1 corner: births, frees, re-births)
// with 30 s and 5 min windows.
func TestGswapEqualsNaive(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 41))
	for n := range testutil.Count(300) {
		tr := testutil.RandomTrace(rng)
		if n%2 == 1 {
			tr.Header.Window = 5 * time.Minute
		}
		for _, c := range gswapCases {
			g := policy.NewGswap(c.budget, c.min, c.k, c.s, c.hist, tr.Header.Window)
			want, settings := naiveGswap(tr, c.budget, c.min, c.k, c.s, c.hist)
			sameRun(t, fmt.Sprintf("trace %d gswap:%s", n, g.Params()), runCtl(t, tr, g), want, settings)
		}
	}
}

// damosCases are damos's parameter sets: no quota, tight quotas, goals
// loose and tight.
var damosCases = []struct {
	minAge int
	quota  uint64 // bytes per window, 0 none
	goal   int64
}{
	{0, 0, 0}, {1, 4096, 0}, {0, 3 * 4096, 0}, {2, 0, 100_000}, {0, 0, 10_000}, {1, 2 * 4096, 500_000}, {0, 4096 + 1, 1},
}

// TestDamosEqualsNaive holds sim.RunControlled of damos to naiveDamos on
// random traces.
func TestDamosEqualsNaive(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 43))
	for n := range testutil.Count(300) {
		tr := testutil.RandomTrace(rng)
		for _, c := range damosCases {
			d := damosOf(t, c.minAge, c.quota, c.goal, tr.Header.Window)
			want, settings := naiveDamos(tr, c.minAge, c.quota, c.goal)
			sameRun(t, fmt.Sprintf("trace %d damos:%s", n, d.Params()), runCtl(t, tr, d), want, settings)
		}
	}
}

// damosOf parses damos with a quota of q bytes per window (none if 0).
func damosOf(t *testing.T, minAge int, q uint64, goal int64, window time.Duration) policy.Controller {
	t.Helper()
	spec := fmt.Sprintf("damos:min_age=%d,quota=inf", minAge)
	if q != 0 {
		spec = fmt.Sprintf("damos:min_age=%d,quota=%d/%s", minAge, q, window)
	}
	if goal != 0 {
		spec += ",goal=pr<=" + policy.FormatRate(goal)
	}
	c, err := policy.ParseController(spec, policy.ControllerOptions{Window: window})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestControllersEqualNaiveGen is both brute forces on every gen model, at
// the published defaults and at settings that bind (a quota below the due
// pages, a goal that moves the quota, a budget that picks thresholds).
func TestControllersEqualNaiveGen(t *testing.T) {
	for _, model := range gen.Models {
		tr := sim.GenTrace(t, model, 300, 60, 9)
		w := tr.Header.Window
		for _, c := range append(gswapCases, struct {
			budget          int64
			min, k, s, hist int
		}{policy.GswapBudgetPPM, 4, policy.GswapK, 10, 120}) {
			g := policy.NewGswap(c.budget, c.min, c.k, c.s, c.hist, w)
			want, settings := naiveGswap(tr, c.budget, c.min, c.k, c.s, c.hist)
			sameRun(t, model+" gswap:"+g.Params(), runCtl(t, tr, g), want, settings)
		}
		for _, c := range append(damosCases, struct {
			minAge int
			quota  uint64
			goal   int64
		}{4, uint64(policy.DamosQuotaBytes) * uint64(w/time.Second), 0}, struct {
			minAge int
			quota  uint64
			goal   int64
		}{1, 20 * 4096, 20_000}) {
			d := damosOf(t, c.minAge, c.quota, c.goal, w)
			want, settings := naiveDamos(tr, c.minAge, c.quota, c.goal)
			got := runCtl(t, tr, d)
			sameRun(t, model+" damos:"+d.Params(), got, want, settings)
		}
	}
}

// TestFeedLoop holds policy.FeedLoopNextInput to feedNaive over the whole
// range (scores below, at, above and at twice the goal; inputs near 2^64),
// and to the kernel's kunit expectations (mm/damon/tests/core-kunit.h,
// damon_test_feed_loop_next_input): a score below the goal raises the
// input, above it lowers it, and further below raises it more.
func TestFeedLoop(t *testing.T) {
	rng := testutil.Rand(7)
	lasts := []uint64{10000, 10001, 900000, 1 << 40, math.MaxUint64 / 10000, math.MaxUint64/10000 + 1, math.MaxUint64 - 5, math.MaxUint64}
	scores := []uint64{0, 1, 200, 2000, 9999, 10000, 10001, 15000, 19999, 20000, 250000000, math.MaxUint64}
	for range 2000 {
		lasts = append(lasts, rng.Uint64()>>uint(rng.IntN(64)))
		scores = append(scores, rng.Uint64N(30000))
	}
	for i, l := range lasts {
		l = max(l, 10000)
		for _, s := range scores[:min(len(scores), 12+i%50)] {
			if got, want := policy.FeedLoopNextInput(l, s), feedNaive(l, s); got != want {
				t.Fatalf("next(%d, %d) = %d, want %d", l, s, got, want)
			}
		}
	}
	f := policy.FeedLoopNextInput
	if !(f(900000, 200) > 900000 && f(900000, 250000000) < 900000 && f(900000, 200) > f(900000, 2000)) {
		t.Errorf("kunit expectations: next(900000, 200) = %d, next(900000, 250000000) = %d, next(900000, 2000) = %d", f(900000, 200), f(900000, 250000000), f(900000, 2000))
	}
	if f(900000, 0) != 1800000 || f(900000, 15000) != 450000 || f(900000, 20000) != 10000 {
		t.Errorf("next(900000, 0|15000|20000) = %d %d %d, want 1800000 450000 10000", f(900000, 0), f(900000, 15000), f(900000, 20000))
	}
}
