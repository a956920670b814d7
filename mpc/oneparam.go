package mpc

import (
	"mdk/policy"
	"mdk/trace"
)

// oneParam is the generic engine of every policy.OneParam family (age,
// vmin, lopp, ...). A gap with critical value c is reclaimed by the settings
// x <= c, i.e. the first countLE(c) values of the axis; it is added at that
// count, and suffix sums over the axis give each setting's totals.
type oneParam struct {
	ps    []policy.OneParam
	axis  *floatAxis
	n     int       // axis length
	cnt   []int64   // cnt[k]: reclaimed gaps whose first non-reclaiming index is k
	sum   []int64   // Σ idle of those gaps
	prom  [][]int64 // prom[w][k]: closed reclaimed gaps ending in w, by k
	plus  rows      // by window of the gap's start+1, then k
	minus rows      // by window of the gap's end, then k
	delay bool
	feat  bool
}

func newOneParam(ps []policy.OneParam) *oneParam {
	xs := make([]float64, len(ps))
	for i, p := range ps {
		xs[i] = p.Param()
	}
	e := &oneParam{ps: ps, axis: newFloatAxis(xs), delay: ps[0].DelayIsParam(), feat: ps[0].UsesFeatures()}
	e.n = len(e.axis.vals)
	e.cnt = make([]int64, e.n+1)
	e.plus.width, e.minus.width = e.n+1, e.n+1
	e.sum = make([]int64, e.n+1)
	return e
}

func (e *oneParam) needsFeatures() bool { return e.feat }

func (e *oneParam) newWindow(w int) { e.prom = append(e.prom, make([]int64, e.n+1)) }

func (e *oneParam) gap(g trace.Gap, feat *[6]int) {
	k := e.axis.countLE(e.ps[0].Critical(g, feat))
	if k == 0 {
		return
	}
	e.cnt[k]++
	e.sum[k] += int64(g.Idle)
	end := g.Start + g.Idle + 1
	if g.Closed {
		e.prom[end][k]++
	}
	e.plus.at(g.Start + 1)[k]++
	e.minus.at(end)[k]++
}

func (e *oneParam) endWindow(int, int64) {}

func (e *oneParam) finish(W int) ([]int64, [][]int64, [][]int64) {
	// Suffix sums: setting at axis index s reclaims the gaps added at k > s.
	cnt := make([]int64, e.n)
	sum := make([]int64, e.n)
	var c, s int64
	for k := e.n; k >= 1; k-- {
		c += e.cnt[k]
		s += e.sum[k]
		cnt[k-1], sum[k-1] = c, s
	}
	proms := make([][]int64, e.n) // by axis index
	for i := range proms {
		proms[i] = make([]int64, W)
	}
	for w, row := range e.prom {
		var p int64
		for k := e.n; k >= 1; k-- {
			p += row[k]
			proms[k-1][w] = p
		}
	}
	suffix := func(row []int64) []int64 { return suffix1(row, e.n) }
	plus := e.plus.mapRows(W, suffix)
	minus := e.minus.mapRows(W, suffix)
	saved := make([]int64, len(e.ps))
	out := make([][]int64, len(e.ps))
	perWin := make([][]int64, len(e.ps))
	for i, p := range e.ps {
		a := e.axis.index(p.Param())
		saved[i] = sum[a]
		shift := 0
		if e.delay {
			saved[i] -= int64(p.Param()) * cnt[a]
			shift = int(p.Param())
		}
		out[i] = append([]int64(nil), proms[a]...)
		perWin[i] = savedWindows(W, plus, minus, a, shift)
	}
	return saved, out, perWin
}
