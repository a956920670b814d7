package mpc

import (
	"mdk/policy"
	"mdk/trace"
)

// grid accumulates gaps on a two-parameter grid: cells (i, j) with
// 0 <= i <= n1, 0 <= j <= n2, each holding a count, a sum of idle lengths
// and per-window promotions.
type grid struct {
	n1, n2 int
	cnt    []int64
	sum    []int64
	prom   [][]int64 // by window, then cell
	plus   rows      // by window of the gap's start+1, then cell
	minus  rows      // by window of the gap's end, then cell
}

func newGrid(n1, n2 int) *grid {
	c := (n1 + 1) * (n2 + 1)
	return &grid{n1: n1, n2: n2, cnt: make([]int64, c), sum: make([]int64, c), plus: rows{width: c}, minus: rows{width: c}}
}

func (g *grid) cell(i, j int) int { return i*(g.n2+1) + j }

func (g *grid) newWindow() { g.prom = append(g.prom, make([]int64, (g.n1+1)*(g.n2+1))) }

func (g *grid) add(i, j int, gp trace.Gap) {
	c := g.cell(i, j)
	g.cnt[c]++
	g.sum[c] += int64(gp.Idle)
	end := gp.Start + gp.Idle + 1
	if gp.Closed {
		g.prom[end][c]++
	}
	g.plus.at(gp.Start + 1)[c]++
	g.minus.at(end)[c]++
}

// cumulate turns a cell array into sums over a quadrant: value(a, b) =
// Σ cells (i, j) with i > a (iSuffix) or i <= a (!iSuffix), and j > b.
// The result is indexed by cell(a, b) for a < n1 (or a <= n1-1), b < n2.
func (g *grid) cumulate(x []int64, iSuffix bool) []int64 {
	out := make([]int64, len(x))
	// First along j: s[i][b] = Σ_{j > b} x[i][j].
	col := make([]int64, len(x))
	for i := 0; i <= g.n1; i++ {
		var s int64
		for b := g.n2 - 1; b >= 0; b-- {
			s += x[g.cell(i, b+1)]
			col[g.cell(i, b)] = s
		}
	}
	// Then along i.
	for b := 0; b < g.n2; b++ {
		var s int64
		if iSuffix {
			for a := g.n1 - 1; a >= 0; a-- {
				s += col[g.cell(a+1, b)]
				out[g.cell(a, b)] = s
			}
		} else {
			for a := 0; a < g.n1; a++ {
				s += col[g.cell(a, b)]
				out[g.cell(a, b)] = s
			}
		}
	}
	return out
}

// suffix1 returns, for a 1-D array x of length n+1, s[a] = Σ_{i > a} x[i].
func suffix1(x []int64, n int) []int64 {
	s := make([]int64, n)
	var t int64
	for a := n - 1; a >= 0; a-- {
		t += x[a+1]
		s[a] = t
	}
	return s
}

// paw: gap (d, g) is reclaimed by (P, wait) iff d > P and g >= wait, saving
// g - wait. With ia = #{P < d} and ib = #{wait <= g}, those are the settings
// (a, b) with a < ia and b < ib.
type paw struct {
	ps     []policy.PAW
	pa, wa *intAxis
	g      *grid
}

func newPAW(ps []policy.PAW) *paw {
	var P, Wt []int
	for _, p := range ps {
		P = append(P, p.P)
		Wt = append(Wt, p.Wait)
	}
	e := &paw{ps: ps, pa: newIntAxis(P), wa: newIntAxis(Wt)}
	e.g = newGrid(len(e.pa.vals), len(e.wa.vals))
	return e
}

func (e *paw) needsFeatures() bool  { return false }
func (e *paw) newWindow(int)        { e.g.newWindow() }
func (e *paw) endWindow(int, int64) {}
func (e *paw) gap(g trace.Gap, _ *[6]int) {
	ia := e.pa.countLT(g.Prior)
	ib := e.wa.countLE(g.Idle)
	if ia == 0 || ib == 0 {
		return
	}
	e.g.add(ia, ib, g)
}

func (e *paw) finish(W int) ([]int64, [][]int64, [][]int64) {
	cum := func(row []int64) []int64 { return e.g.cumulate(row, true) }
	plus := e.g.plus.mapRows(W, cum)
	minus := e.g.minus.mapRows(W, cum)
	cnt := e.g.cumulate(e.g.cnt, true)
	sum := e.g.cumulate(e.g.sum, true)
	prom := make([][]int64, W)
	for w, row := range e.g.prom {
		prom[w] = e.g.cumulate(row, true)
	}
	saved := make([]int64, len(e.ps))
	out := make([][]int64, len(e.ps))
	perWin := make([][]int64, len(e.ps))
	for i, p := range e.ps {
		c := e.g.cell(e.pa.index(p.P), e.wa.index(p.Wait))
		saved[i] = sum[c] - int64(p.Wait)*cnt[c]
		out[i] = column(prom, c)
		perWin[i] = savedWindows(W, plus, minus, c, p.Wait)
	}
	return saved, out, perWin
}

// pace: gap (d, g) with ia = #{P < d}. The settings with a < ia reclaim it
// at the touch (saving g, promoted if closed, even with g = 0); the settings
// with a >= ia act as age(A): with ib = #{A <= g}, those with b < ib reclaim
// it, saving g - A.
type pace struct {
	ps     []policy.PACE
	pa, aa *intAxis
	sum1   []int64   // by ia
	prom1  [][]int64 // by window, ia
	plus1  rows      // by window of start+1, ia
	minus1 rows      // by window of end, ia
	g      *grid
}

func newPACE(ps []policy.PACE) *pace {
	var P, A []int
	for _, p := range ps {
		P = append(P, p.P)
		A = append(A, p.A)
	}
	e := &pace{ps: ps, pa: newIntAxis(P), aa: newIntAxis(A)}
	e.g = newGrid(len(e.pa.vals), len(e.aa.vals))
	e.sum1 = make([]int64, len(e.pa.vals)+1)
	e.plus1.width, e.minus1.width = len(e.pa.vals)+1, len(e.pa.vals)+1
	return e
}

func (e *pace) needsFeatures() bool  { return false }
func (e *pace) endWindow(int, int64) {}
func (e *pace) newWindow(int) {
	e.g.newWindow()
	e.prom1 = append(e.prom1, make([]int64, len(e.pa.vals)+1))
}

func (e *pace) gap(g trace.Gap, _ *[6]int) {
	ia := e.pa.countLT(g.Prior)
	if ia > 0 {
		e.sum1[ia] += int64(g.Idle)
		end := g.Start + g.Idle + 1
		if g.Closed {
			e.prom1[end][ia]++
		}
		e.plus1.at(g.Start + 1)[ia]++
		e.minus1.at(end)[ia]++
	}
	if ib := e.aa.countLE(g.Idle); ib > 0 && ia < len(e.pa.vals) {
		e.g.add(ia, ib, g)
	}
}

func (e *pace) finish(W int) ([]int64, [][]int64, [][]int64) {
	nP := len(e.pa.vals)
	suf := func(row []int64) []int64 { return suffix1(row, nP) }
	plus1, minus1 := e.plus1.mapRows(W, suf), e.minus1.mapRows(W, suf)
	cum := func(row []int64) []int64 { return e.g.cumulate(row, false) }
	plus2, minus2 := e.g.plus.mapRows(W, cum), e.g.minus.mapRows(W, cum)
	sum1 := suffix1(e.sum1, nP)
	cnt2 := e.g.cumulate(e.g.cnt, false)
	sum2 := e.g.cumulate(e.g.sum, false)
	prom1 := make([][]int64, W)
	prom2 := make([][]int64, W)
	for w := range e.g.prom {
		prom1[w] = suffix1(e.prom1[w], nP)
		prom2[w] = e.g.cumulate(e.g.prom[w], false)
	}
	saved := make([]int64, len(e.ps))
	out := make([][]int64, len(e.ps))
	perWin := make([][]int64, len(e.ps))
	for i, p := range e.ps {
		a, b := e.pa.index(p.P), e.aa.index(p.A)
		c := e.g.cell(a, b)
		saved[i] = sum1[a] + sum2[c] - int64(p.A)*cnt2[c]
		out[i] = make([]int64, W)
		for w := range out[i] {
			out[i][w] = prom1[w][a] + prom2[w][c]
		}
		perWin[i] = savedWindows(W, plus1, minus1, a, 0)
		for w, v := range savedWindows(W, plus2, minus2, c, p.A) {
			perWin[i][w] += v
		}
	}
	return saved, out, perWin
}
