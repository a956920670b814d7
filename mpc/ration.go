package mpc

import (
	"slices"
	"sort"

	"mdk/policy"
)

// ration is the engine of rationed lopp settings (policy.LOPPRation,
// docs/lopp.md "The per-window ration"). The walk ranks every window's
// touches by the model's score, highest first, ties to the lower page
// ([gapWalk.rankTouches]). Setting (theta, q) reclaims the gap of a touch
// in window k with score s and rank r exactly when theta <= s and
// r < B_k(q) = q*|A_k| div 1e6: every touch ranked ahead of it scores at
// least s, so r is also its rank among the window's candidates at any
// theta <= s. For each distinct theta the settings' q values, largest
// first, form an axis; B_k(q) > r holds on a prefix of it, and the gap is
// added at that prefix's length, as the one-parameter engine does. A
// reclaimed gap saves g and costs its promotion, as L-OPP's do.
type ration struct {
	ps     []policy.LOPPRation
	thetas []float64 // distinct, ascending
	qs     [][]int64 // per theta: its distinct q (ppm), descending
	accs   []*acc    // per theta: width len(qs[t])+1
	// accessed holds |A_w| of the windows ended so far.
	accessed []int64
	cache    map[policy.Features]float64
}

// ranker is an engine that needs each gap's rank among its window's
// touches, by the score of rankBy.
type ranker interface{ rankBy() policy.LOPP }

func newRation(ps []policy.LOPPRation) *ration {
	e := &ration{ps: ps, cache: map[policy.Features]float64{}}
	for _, p := range ps {
		e.thetas = append(e.thetas, p.Theta)
	}
	slices.Sort(e.thetas)
	e.thetas = slices.Compact(e.thetas)
	e.qs = make([][]int64, len(e.thetas))
	for _, p := range ps {
		t := e.theta(p.Theta)
		e.qs[t] = append(e.qs[t], p.PPM)
	}
	for t := range e.qs {
		slices.Sort(e.qs[t])
		slices.Reverse(e.qs[t])
		e.qs[t] = slices.Compact(e.qs[t])
		e.accs = append(e.accs, newAcc(len(e.qs[t])+1))
	}
	return e
}

// theta returns the index of theta x.
func (e *ration) theta(x float64) int {
	i, _ := slices.BinarySearch(e.thetas, x)
	return i
}

func (e *ration) rankBy() policy.LOPP          { return e.ps[0].Unrationed() }
func (e *ration) needsGaps() bool              { return true }
func (e *ration) needsFeatures() bool          { return true }
func (e *ration) group(int, bool, []histEntry) {}
func (e *ration) newWindow(w int) {
	for _, a := range e.accs {
		a.newWindow(w)
	}
}
func (e *ration) reserve(windows int, budget *int64) {
	for _, a := range e.accs {
		a.reserve(windows, budget)
	}
}
func (e *ration) endWindow(w int, accessed int64) { e.accessed = append(e.accessed, accessed) }

func (e *ration) gaps(gs []packedGap, fs []policy.Features, ranks []int32) {
	l := e.rankBy()
	for i, g := range gs {
		if !g.closed && g.idle == 0 {
			// Ended in its own window (a free) or by the trace's end: it
			// saves and costs nothing whoever reclaims it, and a free's
			// gap arrives before its window's end is known.
			continue
		}
		s, ok := e.cache[fs[i]]
		if !ok {
			s = l.Score(&fs[i])
			if len(e.cache) < maxCache {
				e.cache[fs[i]] = s
			}
		}
		need := (int64(ranks[i]) + 1) * policy.MaxPPM
		a := e.accessed[g.start]
		for t, theta := range e.thetas {
			if theta > s {
				break
			}
			qs := e.qs[t]
			// qs descending: q*a >= need on a prefix.
			m := sort.Search(len(qs), func(j int) bool { return qs[j]*a < need })
			if m > 0 {
				e.accs[t].add(m, g)
			}
		}
	}
}

func (e *ration) finish(W int) ([]int64, [][]int64, [][]int64) {
	saved := make([]int64, len(e.ps))
	out, perWin := newRows(len(e.ps), W), newRows(len(e.ps), W)
	for t, a := range e.accs {
		s := a.mapped(W, suffix)
		var cols []int
		var outs, perWins [][]int64
		for i, p := range e.ps {
			if p.Theta != e.thetas[t] {
				continue
			}
			c, _ := slices.BinarySearchFunc(e.qs[t], p.PPM, func(x, q int64) int {
				switch {
				case x > q:
					return -1
				case x < q:
					return 1
				}
				return 0
			})
			saved[i] = s.sum[c]
			cols = append(cols, c)
			outs, perWins = append(outs, out[i]), append(perWins, perWin[i])
		}
		s.perWindow(W, cols, nil, outs, perWins)
	}
	return saved, out, perWin
}
