package agent

import (
	"sort"

	"mdk/sim"
)

// lives are the observed trace's gaps as the simulator's oracle has them
// (sim.TraceGaps): compare reads the effect of a page not reclaimed from
// them, with the life rules of SPEC section 1 written once, in sim.
type lives [][]sim.Gap

// after returns, for a page reclaimed at the end of window k (SPEC section
// 1), the window of the promotion this costs (-1 for none) and the end of
// the gap: the page saves windows k+1 .. end-1. The gap is the one the page
// is in at window k (its last touch at or before k); a closed gap costs the
// promotion of the access that closes it, an open one ends with the life
// (after its free, or at the trace's end). A page not alive at k saves
// nothing.
func (l lives) after(p uint32, k, W int) (prom, end int) {
	gs := l[p]
	i := sort.Search(len(gs), func(i int) bool { return int(gs[i].Start) > k }) - 1
	if i < 0 || k >= gs[i].End() {
		return -1, k + 1
	}
	if g := gs[i]; g.Closed {
		return g.End(), g.End()
	}
	return -1, min(gs[i].End(), W)
}
