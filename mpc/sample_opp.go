package mpc

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
