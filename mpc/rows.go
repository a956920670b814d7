package mpc

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

// row returns row w (zeros past the end).
func (t *table) row(w int) []int64 {
	if (w+1)*t.width > len(t.data) {
		return make([]int64, t.width)
	}
	return t.data[w*t.width : (w+1)*t.width]
}

// mapRows applies f to each of the first W rows and returns the results.
func (t *table) mapRows(W int, f func([]int64) []int64) [][]int64 {
	out := make([][]int64, W)
	for w := range out {
		out[w] = f(t.row(w))
	}
	return out
}

// savedWindows returns the saved pages of each window for the setting in
// column c: a reclaimed gap adds +1 from window start+1+shift (the plus
// table holds it at start+1; shift is the setting's delay) and -1 from its
// end (the minus table); the saved count of a window is the running sum.
func savedWindows(W int, plus, minus [][]int64, c, shift int) []int64 {
	out := make([]int64, W)
	var cur int64
	for w := range W {
		if s := w - shift; s >= 0 {
			cur += plus[s][c]
		}
		cur -= minus[w][c]
		out[w] = cur
	}
	return out
}

// column extracts column c of a per-window table.
func column(t [][]int64, c int) []int64 {
	out := make([]int64, len(t))
	for w := range t {
		out[w] = t[w][c]
	}
	return out
}

// acc is what every engine accumulates per cell (a position on its
// parameter axis or grid), per window: the gaps added there by the window of
// their start+1 (where their saved windows begin), the closed ones by the
// window they end in (their promotion) and the open ones by their end. Two
// increments a gap; the counts and idle sums per cell are derived at the end
// (idle = end - (start+1)).
type acc struct {
	width            int
	plus, prom, oend table
}

func newAcc(width int) *acc {
	return &acc{width: width, plus: newTable(width), prom: newTable(width), oend: newTable(width)}
}

func (a *acc) newWindow(w int) {
	a.plus.grow(w + 2)
	a.prom.grow(w + 2)
	a.oend.grow(w + 2)
}

// add adds a gap at cell c.
func (a *acc) add(c int, g packedGap) {
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
	a.plus.data[(end-int(x.Idle))*a.width+c] += x.N
	if closed {
		a.prom.data[end*a.width+c] += x.N
	} else {
		a.oend.data[end*a.width+c] += x.N
	}
}

// ends returns, per window, the gaps ending there (closed and open).
func (a *acc) ends(W int) [][]int64 {
	out := make([][]int64, W)
	for w := range out {
		row := make([]int64, a.width)
		p, o := a.prom.row(w), a.oend.row(w)
		for c := range row {
			row[c] = p[c] + o[c]
		}
		out[w] = row
	}
	return out
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

// mapped returns the acc's per-window promotions, saved-window starts and
// ends for the first W windows, each row transformed by f (a suffix or
// quadrant sum over cells), and the transformed totals.
func (a *acc) mapped(W int, f func([]int64) []int64) (prom, plus, end [][]int64, cnt, sum []int64) {
	prom = a.prom.mapRows(W, f)
	plus = a.plus.mapRows(W, f)
	end = a.ends(W)
	for w := range end {
		end[w] = f(end[w])
	}
	c, s := a.totals()
	return prom, plus, end, f(c), f(s)
}
