package mpc

import (
	"slices"

	"mdk/policy"
)

// opp: every open gap with g >= 1 is reclaimed (by every setting); the
// closed gaps with g >= 1 ending in window j are ranked by g when j is done,
// and each setting reclaims its budget's worth of the longest.
//
// The closed gaps of window j arrive as a histogram: n_k gaps of idle g_k.
// Ranked longest first, group k holds ranks M_{k-1}+1 .. M_k (M cumulative
// counts). A setting taking t gaps takes every group with M_k <= t whole and
// t - M_{k-1} gaps of the group where t falls. Per-window savings: a taken
// gap of group k saves windows j-g_k .. j-1, so it adds +1 at window j-g_k.
// Settings sorted by rate take nested prefixes, so the settings that take
// group k whole are a suffix of that order (one table entry, cumulated at
// the end), and each setting takes at most one group in part.
type opp struct {
	groupOnly
	// scale is 1/rate of a sampled run (1 for a whole trace): each gap of
	// the sample stands for scale gaps, budgets are taken on the scaled
	// accessed counts, and every total is kept in the whole trace's units
	// (wholeUnits), so a budget that is not a multiple of scale takes a
	// part of a gap of the sample, exactly, instead of being floored.
	scale  int64
	ps     []policy.OPP
	byRate []int     // setting indexes sorted by rate
	open   int64     // Σ g of open gaps with g >= 1
	saved  []int64   // closed-gap savings per setting
	prom   [][]int64 // per setting, per window
	count  []int64   // count[g]: closed gaps of idle g >= 1 in the current window
	idles  []int32   // the g with count[g] > 0
	take   []int64   // per position in byRate, for the current window
	plus   table     // by window, position in byRate (prefix form): reclaimed closed gaps start saving
	minus  table     // by window, position in byRate: reclaimed closed gaps ending there
	oplus  table     // by window: open gaps start saving (width 1)
	ominus table     // by window: open gaps end
	// flat: totals only (flatten, a sampled run's sub-samples): no
	// tables, no per-window promotions, their totals in proms.
	flat  bool
	proms []int64
}

func newOPP(ps []policy.OPP) *opp {
	e := &opp{ps: ps, scale: 1, saved: make([]int64, len(ps)), prom: make([][]int64, len(ps))}
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

// wholeUnits reports that the engine's totals are already in the whole
// trace's units: a sampled run's results do not scale them again.
func (e *opp) wholeUnits() bool { return true }

func (e *opp) newWindow(w int) {
	if len(e.count) < w+1 {
		e.count = append(e.count, make([]int64, w+1-len(e.count))...)
	}
	if e.flat {
		return
	}
	for _, t := range []*table{&e.plus, &e.minus, &e.oplus, &e.ominus} {
		t.grow(w + 2)
	}
}

func (e *opp) reserve(windows int, budget *int64) {
	if e.flat {
		return
	}
	for _, t := range []*table{&e.plus, &e.minus, &e.oplus, &e.ominus} {
		t.reserve(windows+2, budget)
	}
}

func (e *opp) group(end int, closed bool, es []histEntry) {
	for _, x := range es {
		if x.Idle < 1 {
			continue
		}
		n := x.N * e.scale
		if !closed {
			e.open += int64(x.Idle) * n
			if e.flat {
				continue
			}
			e.oplus.data[end-int(x.Idle)] += n
			e.ominus.data[end] += n
			continue
		}
		if e.count[x.Idle] == 0 {
			e.idles = append(e.idles, x.Idle)
		}
		e.count[x.Idle] += n
	}
}

func (e *opp) endWindow(j int, accessed int64) {
	if !e.flat {
		for i := range e.ps {
			e.prom[i] = append(e.prom[i], 0)
		}
	}
	if len(e.idles) == 0 {
		return
	}
	// Longest first.
	e.rankIdles()
	var n int64
	for _, g := range e.idles {
		n += e.count[g]
	}
	var minus []int64
	if !e.flat {
		minus = e.minus.row(j)
	}
	for q, i := range e.byRate {
		t := min(e.ps[i].Budget(accessed*e.scale), n)
		e.take[q] = t
		if e.flat {
			e.proms[i] += t
			continue
		}
		e.prom[i][j] = t
		minus[q] += t
	}
	// Walk the groups; q is the first position whose take reaches past
	// the groups seen so far.
	var M, S int64 // gaps and idle sum of the groups before the current one
	q := 0
	for _, g := range e.idles {
		nk := e.count[g]
		e.count[g] = 0
		row := (j - int(g)) * e.plus.width
		// Positions whose take ends inside this group take part of it.
		for q < len(e.take) && e.take[q] < M+nk {
			if part := e.take[q] - M; part > 0 {
				e.saved[e.byRate[q]] += S + part*int64(g)
				if !e.flat {
					e.plus.data[row+q] += part
					if q+1 < e.plus.width {
						e.plus.data[row+q+1] -= part
					}
				}
			} else {
				e.saved[e.byRate[q]] += S
			}
			q++
		}
		// The rest take all of it.
		if q < len(e.take) && !e.flat {
			e.plus.data[row+q] += nk
		}
		M += nk
		S += nk * int64(g)
	}
	for ; q < len(e.take); q++ {
		e.saved[e.byRate[q]] += S
	}
	e.idles = e.idles[:0]
}

func (e *opp) finish(W int) ([]int64, [][]int64, [][]int64) {
	saved := make([]int64, len(e.ps))
	for i := range e.ps {
		saved[i] = e.saved[i] + e.open
	}
	prefix := func(row []int64) {
		var s int64
		for q, v := range row {
			s += v
			row[q] = s
		}
	}
	open := newRows(1, W)
	addSaved(W, 1, e.oplus.rows(W), e.ominus.rows(W), []int{0}, nil, open)
	cols := make([]int, len(e.ps))
	for q, i := range e.byRate {
		cols[i] = q
	}
	perWin := newRows(len(e.ps), W)
	addSaved(W, e.plus.width, e.plus.mapRows(W, prefix), e.minus.rows(W), cols, nil, perWin)
	for i := range perWin {
		for w, v := range open[0] {
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
