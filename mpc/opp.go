package mpc

import (
	"slices"

	"mdk/policy"
	"mdk/trace"
)

// opp: every open gap with g >= 1 is reclaimed (by every setting); the
// closed gaps with g >= 1 ending in window j are ranked by g when j is done,
// and each setting reclaims its budget's worth of the longest.
type opp struct {
	ps      []policy.OPP
	open    int64     // Σ g of open gaps with g >= 1
	saved   []int64   // closed-gap savings per setting
	prom    [][]int64 // per setting, per window
	pending []int32   // idle lengths of closed gaps (g >= 1) ending in the current window
	prefix  []int64
}

func newOPP(ps []policy.OPP) *opp {
	return &opp{ps: ps, saved: make([]int64, len(ps)), prom: make([][]int64, len(ps))}
}

func (e *opp) needsFeatures() bool { return false }
func (e *opp) newWindow(int)       { e.pending = e.pending[:0] }

func (e *opp) gap(g trace.Gap, _ *[6]int) {
	if g.Idle < 1 {
		return
	}
	if !g.Closed {
		e.open += int64(g.Idle)
		return
	}
	e.pending = append(e.pending, int32(g.Idle))
}

func (e *opp) endWindow(w int, accessed int64) {
	for i := range e.ps {
		e.prom[i] = append(e.prom[i], 0)
	}
	if len(e.pending) == 0 {
		return
	}
	// Longest first; prefix[k] = Σ of the k longest.
	slices.Sort(e.pending)
	slices.Reverse(e.pending)
	e.prefix = append(e.prefix[:0], 0)
	var s int64
	for _, g := range e.pending {
		s += int64(g)
		e.prefix = append(e.prefix, s)
	}
	n := int64(len(e.pending))
	for i, p := range e.ps {
		take := min(p.Budget(accessed), n)
		e.saved[i] += e.prefix[take]
		e.prom[i][w] = take
	}
}

func (e *opp) finish(W int) ([]int64, [][]int64) {
	saved := make([]int64, len(e.ps))
	for i := range e.ps {
		saved[i] = e.saved[i] + e.open
	}
	return saved, e.prom
}
