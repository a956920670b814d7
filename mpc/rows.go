package mpc

// rows is a per-window table of fixed-width rows, grown on demand: a gap
// may add to the row of a window that has not been read yet (a life freed in
// window k ends at k+1).
type rows struct {
	width int
	data  [][]int64
}

func (r *rows) at(w int) []int64 {
	for len(r.data) <= w {
		r.data = append(r.data, make([]int64, r.width))
	}
	return r.data[w]
}

// mapRows applies f to every row of the first W windows (missing rows are
// zero) and returns the results.
func (r *rows) mapRows(W int, f func([]int64) []int64) [][]int64 {
	out := make([][]int64, W)
	zero := make([]int64, r.width)
	for w := range out {
		row := zero
		if w < len(r.data) {
			row = r.data[w]
		}
		out[w] = f(row)
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
