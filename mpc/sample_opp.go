package mpc

import "slices"

// flatten makes OPP's engine keep its totals only (a totaler): each
// setting's saved page-windows and total promotions, without the
// per-window tables of its savings and its per-window promotions. Its
// windows are ranked as before (endWindow: each setting's budget is the
// window's, and its savings the same).
func (e *opp) flatten() {
	e.flat = true
	e.proms = make([]int64, len(e.ps))
}

// finishTotals returns a flat engine's totals, in the order of its
// settings: finish's saved page-windows and the sums of its promotions.
func (e *opp) finishTotals() (saved, proms []int64) {
	saved = make([]int64, len(e.ps))
	for i := range e.ps {
		saved[i] = e.saved[i] + e.open
	}
	return saved, e.proms
}

// rankIdles orders the window's idle lengths longest first. A flat engine
// (a sub-sample's, whose windows have many of the idle lengths up to the
// window's index) takes them from the counts in one scan when they are
// more than an eighth of the lengths there could be, instead of sorting
// them: the same order, the idle lengths being distinct.
func (e *opp) rankIdles() {
	if e.flat && len(e.idles)*8 > len(e.count) {
		e.idles = e.idles[:0]
		for g := len(e.count) - 1; g >= 1; g-- {
			if e.count[g] != 0 {
				e.idles = append(e.idles, int32(g))
			}
		}
		return
	}
	slices.Sort(e.idles)
	slices.Reverse(e.idles)
}
