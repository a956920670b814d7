package sim

import (
	"slices"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// This file is a second, independent implementation of SPEC section 2's
// per-gap table, written only for tests. It extracts lives with its own
// map-based reading of SPEC section 1 (keyed by (space, page), not by dense
// ID), then decides each gap with the closed forms of the table:
//
//	age(A):    reclaim at i+A if g >= A, saves g-A
//	vmin(T):   reclaim at i if g > T, saves g
//	opp(r):    open gaps with g >= 1; per window j the B_j longest closed gaps with g >= 1
//	paw(P,w):  reclaim at i+w if d > P and g >= w, saves g-w
//	pace(P,A): if d > P reclaim at i (saves g), else as age(A)
//
// A reclaimed closed gap costs one promotion in window j = i+g+1.

type cfGap struct {
	start, idle, prior int
	closed             bool
}

func (g cfGap) end() int { return g.start + g.idle + 1 }

// cfGaps returns every gap of t, |A_w| per window and L.
func cfGaps(t *trace.Trace) (gaps []cfGap, accessed []int64, alive []int64) {
	type life struct {
		start, last, prior int
	}
	lives := map[trace.Page]*life{}
	W := len(t.Windows)
	accessed = make([]int64, W)
	alive = make([]int64, W)
	closeLife := func(p trace.Page, e int) {
		l := lives[p]
		gaps = append(gaps, cfGap{start: l.last, idle: e - l.last - 1, prior: l.prior})
		for w := l.start; w < e; w++ {
			alive[w]++
		}
		delete(lives, p)
	}
	for w, win := range t.Windows {
		acc := map[trace.Page]bool{}
		for _, id := range win.Accessed {
			p := t.Pages[id]
			acc[p] = true
			if l, ok := lives[p]; ok {
				gaps = append(gaps, cfGap{start: l.last, idle: w - l.last - 1, prior: l.prior, closed: true})
				l.prior = w - l.last
				l.last = w
			} else {
				lives[p] = &life{start: w, last: w, prior: trace.Inf}
			}
		}
		accessed[w] = int64(len(acc))
		for _, id := range win.Born {
			p := t.Pages[id]
			if _, ok := lives[p]; !ok && !acc[p] {
				lives[p] = &life{start: w, last: w, prior: trace.Inf}
			}
		}
		for _, id := range win.Freed {
			p := t.Pages[id]
			if _, ok := lives[p]; ok {
				closeLife(p, w+1)
			}
		}
	}
	// Map order does not matter: every remaining life ends at W.
	for p := range lives {
		closeLife(p, W)
	}
	return gaps, accessed, alive
}

// cfRun computes the result of setting s on t with the closed forms.
func cfRun(t *trace.Trace, s policy.Setting) *result.Result {
	gaps, accessed, alive := cfGaps(t)
	W := len(t.Windows)
	res := &result.Result{
		Policy: s.Policy(), Params: s.Params(),
		Promotions: make([]int64, W), Accessed: accessed, AlivePerWindow: alive,
		SavedPerWindow: make([]int64, W), PageSize: int64(t.Header.PageSize),
	}
	for _, a := range alive {
		res.Alive += a
	}
	// delay returns when (i+delay) the gap is reclaimed, or -1 if never.
	var delay func(g cfGap) int
	switch p := s.(type) {
	case policy.AGE:
		delay = func(g cfGap) int { return ageDelay(g, p.A) }
	case policy.VMIN:
		delay = func(g cfGap) int {
			if g.idle > p.T {
				return 0
			}
			return -1
		}
	case policy.PAW:
		delay = func(g cfGap) int {
			if g.prior > p.P && g.idle >= p.Wait {
				return p.Wait
			}
			return -1
		}
	case policy.PACE:
		delay = func(g cfGap) int {
			if g.prior > p.P {
				return 0
			}
			return ageDelay(g, p.A)
		}
	case policy.OPP:
		chosen := map[int]bool{}
		byEnd := map[int][]int{}
		for n, g := range gaps {
			if g.idle < 1 {
				continue
			}
			if !g.closed {
				chosen[n] = true
				continue
			}
			byEnd[g.end()] = append(byEnd[g.end()], n)
		}
		for j, ns := range byEnd {
			slices.SortFunc(ns, func(a, b int) int { return gaps[b].idle - gaps[a].idle })
			budget := p.PPM * accessed[j] / policy.MaxPPM
			for k := 0; k < len(ns) && int64(k) < budget; k++ {
				chosen[ns[k]] = true
			}
		}
		n := -1
		delay = func(g cfGap) int {
			n++ // gaps are decided in slice order below
			if chosen[n] {
				return 0
			}
			return -1
		}
	default:
		panic("closed form: unknown policy " + s.Policy())
	}
	for _, g := range gaps {
		d := delay(g)
		if d < 0 {
			continue
		}
		res.Saved += int64(g.idle - d)
		for w := g.start + d + 1; w < g.end(); w++ {
			res.SavedPerWindow[w]++
		}
		if g.closed {
			res.Promotions[g.end()]++
		}
	}
	return res
}

func ageDelay(g cfGap, A int) int {
	if g.idle >= A {
		return A
	}
	return -1
}
