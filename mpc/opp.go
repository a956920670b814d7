package mpc

import (
	"slices"

	"mdk/policy"
)

// opp: every open gap with g >= 1 is reclaimed (by every setting); the
// closed gaps with g >= 1 ending in window j are ranked by g when j is done,
// and each setting reclaims its budget's worth of the longest.
//
// Per-window savings: a setting that takes the t longest gaps of window j
// saves, for the m-th longest (idle g_m), the windows j-g_m .. j-1. Settings
// sorted by rate take nested prefixes of the ranking, so the m-th gap adds
// +1 at window j-g_m to a suffix of that order (first position whose take is
// >= m): one table entry per reclaimed gap, cumulated at the end.
type opp struct {
	ps      []policy.OPP
	byRate  []int     // setting indexes sorted by rate
	open    int64     // Σ g of open gaps with g >= 1
	saved   []int64   // closed-gap savings per setting
	prom    [][]int64 // per setting, per window
	pending []int32   // idle lengths of closed gaps (g >= 1) ending in the current window
	prefix  []int64
	take    []int64 // per position in byRate, for the current window
	plus    table   // by window, position in byRate: +1 where a reclaimed closed gap starts saving
	minus   table   // by window, position in byRate: reclaimed closed gaps ending there
	oplus   table   // by window: open gaps start saving (width 1)
	ominus  table   // by window: open gaps end
}

func newOPP(ps []policy.OPP) *opp {
	e := &opp{ps: ps, saved: make([]int64, len(ps)), prom: make([][]int64, len(ps))}
	e.byRate = make([]int, len(ps))
	for i := range e.byRate {
		e.byRate[i] = i
	}
	slices.SortStableFunc(e.byRate, func(a, b int) int {
		switch {
		case ps[a].PPM < ps[b].PPM:
			return -1
		case ps[a].PPM > ps[b].PPM:
			return 1
		}
		return 0
	})
	e.take = make([]int64, len(ps))
	e.plus, e.minus = newTable(len(ps)), newTable(len(ps))
	e.oplus, e.ominus = newTable(1), newTable(1)
	return e
}

func (e *opp) needsFeatures() bool { return false }
func (e *opp) newWindow(w int) {
	e.pending = e.pending[:0]
	for _, t := range []*table{&e.plus, &e.minus, &e.oplus, &e.ominus} {
		t.grow(w + 2)
	}
}

func (e *opp) gaps(gs []packedGap, _ [][6]int32) {
	for _, g := range gs {
		if g.idle < 1 {
			continue
		}
		if !g.closed {
			e.open += int64(g.idle)
			e.oplus.data[g.start+1]++
			e.ominus.data[g.start+g.idle+1]++
			continue
		}
		e.pending = append(e.pending, g.idle)
	}
}

func (e *opp) endWindow(j int, accessed int64) {
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
	minus := e.minus.row(j)
	for q, i := range e.byRate {
		t := min(e.ps[i].Budget(accessed), n)
		e.take[q] = t
		e.saved[i] += e.prefix[t]
		e.prom[i][j] = t
		minus[q] += t
	}
	// The m-th longest gap (m = 1..max take) is taken by the positions q
	// with take[q] >= m, a suffix of byRate since take grows with the rate.
	q := 0
	for m := int64(1); m <= e.take[len(e.take)-1]; m++ {
		for e.take[q] < m {
			q++
		}
		e.plus.data[(j-int(e.pending[m-1]))*e.plus.width+q]++
	}
}

func (e *opp) finish(W int) ([]int64, [][]int64, [][]int64) {
	saved := make([]int64, len(e.ps))
	for i := range e.ps {
		saved[i] = e.saved[i] + e.open
	}
	prefix := func(row []int64) []int64 {
		out := make([]int64, len(row))
		var s int64
		for q, v := range row {
			s += v
			out[q] = s
		}
		return out
	}
	ident := func(row []int64) []int64 { return row }
	plus := e.plus.mapRows(W, prefix)
	minus := e.minus.mapRows(W, ident)
	open := savedWindows(W, e.oplus.mapRows(W, ident), e.ominus.mapRows(W, ident), 0, 0)
	perWin := make([][]int64, len(e.ps))
	for q, i := range e.byRate {
		perWin[i] = savedWindows(W, plus, minus, q, 0)
		for w, v := range open {
			perWin[i][w] += v
		}
	}
	for i := range e.prom {
		if e.prom[i] == nil {
			e.prom[i] = []int64{}
		}
	}
	return saved, e.prom, perWin
}
