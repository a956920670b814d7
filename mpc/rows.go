package mpc

import "slices"

// table is a per-window table of fixed-width rows in one flat slice. A gap
// adds to the rows of its start+1 and of its end, which are at most one
// window past the window being read, so engines grow the table to w+2 rows
// when window w begins (and the open gaps reported after the last window W-1
// end at most at W).
type table struct {
	width int
	data  []int64
}

func newTable(width int) table { return table{width: width} }

// grow makes sure rows 0..n-1 exist.
func (t *table) grow(n int) {
	if need := n * t.width; len(t.data) < need {
		t.data = append(t.data, make([]int64, need-len(t.data))...)
	}
}

// reserve makes room for n rows, so that growing to them copies nothing,
// if their bytes fit in what is left of budget (which it reduces).
func (t *table) reserve(n int, budget *int64) {
	need := n * t.width
	if cap(t.data) >= need || int64(need)*8 > *budget {
		return
	}
	*budget -= int64(need) * 8
	t.data = slices.Grow(t.data, need-len(t.data))
}

// row returns row w (zeros past the end).
func (t *table) row(w int) []int64 {
	if (w+1)*t.width > len(t.data) {
		return make([]int64, t.width)
	}
	return t.data[w*t.width : (w+1)*t.width]
}

// rows returns the first W rows, flat (growing the table to them).
func (t *table) rows(W int) []int64 {
	t.grow(W)
	return t.data[:W*t.width]
}

// mapRows applies f in place to each of the first W rows and returns them,
// flat: the table is spent.
func (t *table) mapRows(W int, f func([]int64)) []int64 {
	rs := t.rows(W)
	for o := 0; o < len(rs); o += t.width {
		f(rs[o : o+t.width])
	}
	return rs
}

// suffix turns row, of length n+1, into its suffix sums in place:
// row[a] = Σ_{i > a} row[i] for a < n, and row[n] = 0.
func suffix(row []int64) {
	n := len(row) - 1
	if n < 0 {
		return
	}
	next, t := row[n], int64(0)
	for a := n - 1; a >= 0; a-- {
		t += next
		next = row[a]
		row[a] = t
	}
	row[n] = 0
}

// newRows returns n rows of W zeros each, in one allocation.
func newRows(n, W int) [][]int64 {
	flat := make([]int64, n*W)
	out := make([][]int64, n)
	for i := range out {
		out[i] = flat[i*W : (i+1)*W : (i+1)*W]
	}
	return out
}

// addSaved adds to out[i] the saved pages of each window for the setting in
// column cols[i]: a reclaimed gap adds +1 from window start+1+shift (the
// plus table holds it at start+1; shifts[i] is the setting's delay, none if
// shifts is nil) and -1 from its end (the minus table); the saved count of
// a window is the running sum. plus and minus are flat, rows of width.
func addSaved(W, width int, plus, minus []int64, cols, shifts []int, out [][]int64) {
	cur := make([]int64, len(cols))
	for w := range W {
		row := minus[w*width : (w+1)*width]
		for i, c := range cols {
			s := w
			if shifts != nil {
				s -= shifts[i]
			}
			if s >= 0 {
				cur[i] += plus[s*width+c]
			}
			cur[i] -= row[c]
			out[i][w] += cur[i]
		}
	}
}

// acc is what every engine accumulates per cell (a position on its
// parameter axis or grid), per window: the gaps added there by the window of
// their start+1 (where their saved windows begin), the closed ones by the
// window they end in (their promotion) and the open ones by their end. Two
// increments a gap; the counts and idle sums per cell are derived at the end
// (idle = end - (start+1)).
//
// A flat acc (flatten) keeps no per-window tables: per cell only the
// number of gaps, the sum of their idle lengths and the number of closed
// ones (the promotions), which is all a sampled run's sub-samples print
// ([Options.GroupTotals]).
type acc struct {
	width            int
	plus, prom, oend table
	flat             bool
	fcnt, fsum, fpro []int64 // a flat acc's totals per cell
}

func newAcc(width int) *acc {
	return &acc{width: width, plus: newTable(width), prom: newTable(width), oend: newTable(width)}
}

// flatten makes a keep its totals only; it must be called before any gap
// is added.
func (a *acc) flatten() {
	a.flat = true
	a.fcnt, a.fsum, a.fpro = make([]int64, a.width), make([]int64, a.width), make([]int64, a.width)
}

func (a *acc) newWindow(w int) {
	if a.flat {
		return
	}
	a.plus.grow(w + 2)
	a.prom.grow(w + 2)
	a.oend.grow(w + 2)
}

// reserve makes room for a pass of the given number of windows.
func (a *acc) reserve(windows int, budget *int64) {
	if a.flat {
		return
	}
	a.plus.reserve(windows+2, budget)
	a.prom.reserve(windows+2, budget)
	a.oend.reserve(windows+2, budget)
}

// add adds a gap at cell c.
func (a *acc) add(c int, g packedGap) {
	if a.flat {
		a.fcnt[c]++
		a.fsum[c] += int64(g.idle)
		if g.closed {
			a.fpro[c]++
		}
		return
	}
	a.plus.data[int(g.start+1)*a.width+c]++
	end := int(g.start+g.idle+1)*a.width + c
	if g.closed {
		a.prom.data[end]++
	} else {
		a.oend.data[end]++
	}
}

// addN adds x.N gaps of idle length x.Idle ending in window end at cell c.
func (a *acc) addN(c int, x histEntry, end int, closed bool) {
	if a.flat {
		a.fcnt[c] += x.N
		a.fsum[c] += x.N * int64(x.Idle)
		if closed {
			a.fpro[c] += x.N
		}
		return
	}
	a.plus.data[(end-int(x.Idle))*a.width+c] += x.N
	if closed {
		a.prom.data[end*a.width+c] += x.N
	} else {
		a.oend.data[end*a.width+c] += x.N
	}
}

// totals returns per cell the number of gaps and the sum of their idle
// lengths, over every row of the tables (the last may be window W).
func (a *acc) totals() (cnt, sum []int64) {
	cnt, sum = make([]int64, a.width), make([]int64, a.width)
	rows := len(a.plus.data) / a.width
	for w := range rows {
		p, pr, o := a.plus.row(w), a.prom.row(w), a.oend.row(w)
		for c := range cnt {
			e := pr[c] + o[c]
			cnt[c] += e
			sum[c] += int64(w)*e - int64(w)*p[c]
		}
	}
	return cnt, sum
}

// sums are an acc's tables for the first W windows, each row (of width
// cells) transformed by a suffix or quadrant sum over cells: per window the
// promotions, the saved windows' starts (plus) and the gaps' ends (end, closed
// and open), and the transformed totals. A flat acc's have no per-window
// rows, and the transformed total promotions instead (proms).
type sums struct {
	width           int
	prom, plus, end []int64
	cnt, sum        []int64
	proms           []int64 // a flat acc's
}

// mapped returns the acc's sums, each row transformed in place by f: the
// acc is spent.
func (a *acc) mapped(W int, f func([]int64)) sums {
	if a.flat {
		f(a.fcnt)
		f(a.fsum)
		f(a.fpro)
		return sums{width: a.width, cnt: a.fcnt, sum: a.fsum, proms: a.fpro}
	}
	cnt, sum := a.totals()
	f(cnt)
	f(sum)
	prom, plus, end := a.prom.rows(W), a.plus.rows(W), a.oend.rows(W)
	for i, p := range prom {
		end[i] += p
	}
	for o := 0; o < len(prom); o += a.width {
		f(prom[o : o+a.width])
		f(plus[o : o+a.width])
		f(end[o : o+a.width])
	}
	return sums{width: a.width, prom: prom, plus: plus, end: end, cnt: cnt, sum: sum}
}

// totalProms adds, for each i, the total promotions of the setting in
// column cols[i] to proms[i], from a flat acc's sums; nil proms is a new
// slice. It returns proms.
func (s sums) totalProms(cols []int, proms []int64) []int64 {
	if proms == nil {
		proms = make([]int64, len(cols))
	}
	for i, c := range cols {
		proms[i] += s.proms[c]
	}
	return proms
}

// perWindow adds, for each i, the per-window promotions and saved pages of
// the setting in column cols[i] (delayed by shifts[i], if not nil) to
// proms[i] and saved[i].
func (s sums) perWindow(W int, cols, shifts []int, proms, saved [][]int64) {
	cur := make([]int64, len(cols)) // the running saved count (addSaved)
	if shifts == nil {
		shifts = make([]int, len(cols))
	}
	width := s.width
	for w := range W {
		prow, erow := s.prom[w*width:(w+1)*width], s.end[w*width:(w+1)*width]
		for i, c := range cols {
			proms[i][w] += prow[c]
			x := cur[i] - erow[c]
			if sh := w - shifts[i]; sh >= 0 {
				x += s.plus[sh*width+c]
			}
			cur[i] = x
			saved[i][w] += x
		}
	}
}
