package mpc

import (
	"mdk/policy"
)

// grid is a two-parameter grid: cells (i, j) with 0 <= i <= n1, 0 <= j <= n2.
type grid struct {
	n1, n2 int
	a      *acc
}

func newGrid(n1, n2 int) *grid { return &grid{n1: n1, n2: n2, a: newAcc((n1 + 1) * (n2 + 1))} }

func (g *grid) cell(i, j int) int { return i*(g.n2+1) + j }

// cumulate turns a cell array, in place, into sums over a quadrant:
// value(a, b) = Σ cells (i, j) with j > b and i > a (iSuffix) or i <= a
// (!iSuffix), for a < n1, b < n2, at cell(a, b); the cells with a = n1 or
// b = n2 become 0.
func (g *grid) cumulate(x []int64, iSuffix bool) {
	// First along j: x[i][b] = Σ_{j > b} x[i][j].
	for i := 0; i <= g.n1; i++ {
		suffix(x[g.cell(i, 0) : g.cell(i, g.n2)+1])
	}
	// Then along i.
	for b := 0; b < g.n2; b++ {
		var s int64
		if iSuffix {
			next := x[g.cell(g.n1, b)]
			for a := g.n1 - 1; a >= 0; a-- {
				s += next
				next = x[g.cell(a, b)]
				x[g.cell(a, b)] = s
			}
		} else {
			for a := 0; a < g.n1; a++ {
				s += x[g.cell(a, b)]
				x[g.cell(a, b)] = s
			}
		}
		x[g.cell(g.n1, b)] = 0
	}
}

// paw: gap (d, g) is reclaimed by (P, wait) iff d > P and g >= wait, saving
// g - wait. With ia = #{P < d} and ib = #{wait <= g}, those are the settings
// (a, b) with a < ia and b < ib.
type paw struct {
	groupOnly
	ps     []policy.PAW
	pa, wa *intAxis
	cls    []int // prior class -> ia
	g      *grid
}

func newPAW(ps []policy.PAW, classes classAxis) *paw {
	var P, Wt []int
	for _, p := range ps {
		P = append(P, p.P)
		Wt = append(Wt, p.Wait)
	}
	e := &paw{ps: ps, pa: newIntAxis(P), wa: newIntAxis(Wt)}
	e.g = newGrid(len(e.pa.vals), len(e.wa.vals))
	e.cls = classes.project(e.pa)
	return e
}

func (e *paw) needsFeatures() bool { return false }

func (e *paw) group(end int, closed bool, es []histEntry) {
	for _, x := range es {
		ia := e.cls[x.Class]
		ib := e.wa.countLE(int(x.Idle))
		if ia > 0 && ib > 0 {
			e.g.a.addN(e.g.cell(ia, ib), x, end, closed)
		}
	}
}
func (e *paw) newWindow(w int)                    { e.g.a.newWindow(w) }
func (e *paw) reserve(windows int, budget *int64) { e.g.a.reserve(windows, budget) }
func (e *paw) endWindow(int, int64)               {}

func (e *paw) finish(W int) ([]int64, [][]int64, [][]int64) {
	g := e.g.a.mapped(W, func(row []int64) { e.g.cumulate(row, true) })
	saved, cols, shifts := e.settle(g)
	out, perWin := newRows(len(e.ps), W), newRows(len(e.ps), W)
	g.perWindow(W, cols, shifts, out, perWin)
	return saved, out, perWin
}

func (e *paw) flatten() { e.g.a.flatten() }

func (e *paw) finishTotals() ([]int64, []int64) {
	g := e.g.a.mapped(0, func(row []int64) { e.g.cumulate(row, true) })
	saved, cols, _ := e.settle(g)
	return saved, g.totalProms(cols, nil)
}

// settle returns each setting's saved page-windows from the grid's
// quadrant sums, and its cell and delay (its wait).
func (e *paw) settle(g sums) (saved []int64, cols, shifts []int) {
	saved = make([]int64, len(e.ps))
	cols, shifts = make([]int, len(e.ps)), make([]int, len(e.ps))
	for i, p := range e.ps {
		c := e.g.cell(e.pa.index(p.P), e.wa.index(p.Wait))
		saved[i] = g.sum[c] - int64(p.Wait)*g.cnt[c]
		cols[i], shifts[i] = c, p.Wait
	}
	return saved, cols, shifts
}

// pace: gap (d, g) with ia = #{P < d}. The settings with a < ia reclaim it
// at the touch (saving g, promoted if closed, even with g = 0); the settings
// with a >= ia act as age(A): with ib = #{A <= g}, those with b < ib reclaim
// it, saving g - A.
type pace struct {
	groupOnly
	ps     []policy.PACE
	pa, aa *intAxis
	cls    []int // prior class -> ia
	at     *acc  // reclaimed at the touch, by ia
	g      *grid
}

func newPACE(ps []policy.PACE, classes classAxis) *pace {
	var P, A []int
	for _, p := range ps {
		P = append(P, p.P)
		A = append(A, p.A)
	}
	e := &pace{ps: ps, pa: newIntAxis(P), aa: newIntAxis(A)}
	e.g = newGrid(len(e.pa.vals), len(e.aa.vals))
	e.at = newAcc(len(e.pa.vals) + 1)
	e.cls = classes.project(e.pa)
	return e
}

func (e *pace) needsFeatures() bool { return false }

func (e *pace) group(end int, closed bool, es []histEntry) {
	nP := len(e.pa.vals)
	for _, x := range es {
		ia := e.cls[x.Class]
		if ia > 0 {
			e.at.addN(ia, x, end, closed)
		}
		if ia < nP {
			if ib := e.aa.countLE(int(x.Idle)); ib > 0 {
				e.g.a.addN(e.g.cell(ia, ib), x, end, closed)
			}
		}
	}
}
func (e *pace) endWindow(int, int64) {}
func (e *pace) reserve(windows int, budget *int64) {
	e.g.a.reserve(windows, budget)
	e.at.reserve(windows, budget)
}
func (e *pace) newWindow(w int) {
	e.g.a.newWindow(w)
	e.at.newWindow(w)
}

func (e *pace) finish(W int) ([]int64, [][]int64, [][]int64) {
	at, g := e.mapped(W)
	saved, ais, cols, shifts := e.settle(at, g)
	out, perWin := newRows(len(e.ps), W), newRows(len(e.ps), W)
	at.perWindow(W, ais, nil, out, perWin)
	g.perWindow(W, cols, shifts, out, perWin)
	return saved, out, perWin
}

func (e *pace) flatten() {
	e.at.flatten()
	e.g.a.flatten()
}

func (e *pace) finishTotals() ([]int64, []int64) {
	at, g := e.mapped(0)
	saved, ais, cols, _ := e.settle(at, g)
	return saved, g.totalProms(cols, at.totalProms(ais, nil))
}

// mapped returns the sums of the reclaimed-at-the-touch acc (suffix sums
// over P) and of the grid (quadrant sums).
func (e *pace) mapped(W int) (at, g sums) {
	return e.at.mapped(W, suffix), e.g.a.mapped(W, func(row []int64) { e.g.cumulate(row, false) })
}

// settle returns each setting's saved page-windows from the sums, and its
// P column, its grid cell and its delay (its A).
func (e *pace) settle(at, g sums) (saved []int64, ais, cols, shifts []int) {
	saved = make([]int64, len(e.ps))
	ais, cols, shifts = make([]int, len(e.ps)), make([]int, len(e.ps)), make([]int, len(e.ps))
	for i, p := range e.ps {
		ai, b := e.pa.index(p.P), e.aa.index(p.A)
		c := e.g.cell(ai, b)
		saved[i] = at.sum[ai] + g.sum[c] - int64(p.A)*g.cnt[c]
		ais[i], cols[i], shifts[i] = ai, c, p.A
	}
	return saved, ais, cols, shifts
}
