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
// parameter axis or grid): the count and idle sum of the gaps added there,
// and per window their promotions (closed gaps, in the window they end) and
// the starts (start+1) and ends of their saved windows.
type acc struct {
	width           int
	cnt, sum        []int64
	prom, plus, end table
}

func newAcc(width int) *acc {
	return &acc{width: width, cnt: make([]int64, width), sum: make([]int64, width),
		prom: newTable(width), plus: newTable(width), end: newTable(width)}
}

func (a *acc) newWindow(w int) {
	a.prom.grow(w + 2)
	a.plus.grow(w + 2)
	a.end.grow(w + 2)
}

// add adds a gap at cell c.
func (a *acc) add(c int, g packedGap) {
	a.cnt[c]++
	a.sum[c] += int64(g.idle)
	end := int(g.start+g.idle+1)*a.width + c
	if g.closed {
		a.prom.data[end]++
	}
	a.plus.data[int(g.start+1)*a.width+c]++
	a.end.data[end]++
}
