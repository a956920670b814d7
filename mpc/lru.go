package mpc

import (
	"cmp"
	"slices"
	"sort"

	"mdk/policy"
	"mdk/trace"
)

// lruEngine computes every lru setting's run in one pass from stack
// distances (docs/policies.md, "lru"). The alive pages form one stack in LRU
// order (policy.MoreRecent). Under any capacity the resident pages are a
// prefix of that stack: a page is reclaimed only after every less recent
// resident page is, and an access puts a page on top. So a setting's whole
// state is r, the length of its resident prefix after the last scan point,
// and inclusion holds: a larger limit's prefix is never shorter. Window w
// of a setting with prefix r, limit L:
//
//   - an access of an alive page whose stack distance (its rank in the
//     stack before w's touches, 0 the most recent) is >= r is a promotion;
//     a of the window's accesses have a distance < r;
//   - the window's T touched pages go on top, resident: R = T + r - a pages
//     are resident, the stack's first R; the alive pages not among them
//     are the window's saved pages;
//   - of the pages freed in w, f are in that prefix (those touched in w, and
//     those untouched with a distance < r); the scan keeps min(L, R - f).
//
// The stack distances come from a Fenwick tree over the pages' stack slots
// (a touch takes the next slot, so slots increase with recency; the tree is
// renumbered when its slots run out), O(log pages) per event, and each
// setting costs two binary searches per window: O(records log pages +
// windows x settings log records), memory O(pages + windows x settings).
type lruEngine struct {
	ps []policy.LRU

	slot  []int32 // stack slot of an alive page, -1 if not alive
	last  []int32 // last touch of an alive page
	tree  fenwick
	next  int32 // next free slot
	stack int64 // alive pages after the last scan (the stack's size)
	peak  int64

	r                 []int64 // each setting's resident prefix
	proms, savedPerWn [][]int64
	saved             []int64

	// per-window scratch
	acc, born, fresh []uint32
	accRank, freeRnk []int64
	isAcc, isTouched []bool
}

func newLRU(ps []policy.LRU) *lruEngine {
	e := &lruEngine{ps: ps, r: make([]int64, len(ps)), proms: make([][]int64, len(ps)),
		savedPerWn: make([][]int64, len(ps)), saved: make([]int64, len(ps))}
	return e
}

// grow makes room for page IDs below n.
func (e *lruEngine) grow(n int) {
	for len(e.slot) < n {
		e.slot = append(e.slot, -1)
		e.last = append(e.last, 0)
		e.isAcc = append(e.isAcc, false)
		e.isTouched = append(e.isTouched, false)
	}
}

// rank returns the stack distance of an alive page: the alive pages in
// slots above its own.
func (e *lruEngine) rank(id uint32) int64 {
	return e.stack - e.tree.prefix(int(e.slot[id]))
}

// window runs window win of every setting.
func (e *lruEngine) window(win *trace.Window) {
	w := win.Index
	hi := 0
	for _, l := range [][]uint32{win.Accessed, win.Born, win.Freed} {
		for _, id := range l {
			hi = max(hi, int(id)+1)
		}
	}
	e.grow(hi)
	// Touches: accesses (of alive pages: with a stack distance), then
	// births of pages not alive and not accessed (new lives).
	e.acc, e.born, e.accRank, e.freeRnk = e.acc[:0], e.born[:0], e.accRank[:0], e.freeRnk[:0]
	for _, id := range win.Accessed {
		e.isAcc[id], e.isTouched[id] = true, true
		if e.slot[id] >= 0 {
			e.accRank = append(e.accRank, e.rank(id))
		}
		e.acc = append(e.acc, id)
	}
	for _, id := range win.Born {
		if !e.isAcc[id] && e.slot[id] < 0 {
			e.isTouched[id] = true
			e.born = append(e.born, id)
		}
	}
	T := int64(len(e.acc) + len(e.born))
	aliveAcc := int64(len(e.accRank))
	alive := e.stack + T - aliveAcc // alive in window w
	e.peak = max(e.peak, alive)
	// Frees of pages alive in w: touched in w (in every prefix), or with a
	// stack distance.
	var ft int64
	for _, id := range win.Freed {
		switch {
		case e.isTouched[id]:
			ft++
		case e.slot[id] >= 0:
			e.freeRnk = append(e.freeRnk, e.rank(id))
		}
	}
	slices.Sort(e.accRank)
	slices.Sort(e.freeRnk)
	for i, p := range e.ps {
		r := e.r[i]
		a := int64(sort.Search(len(e.accRank), func(k int) bool { return e.accRank[k] >= r }))
		R := T + r - a
		f := ft + int64(sort.Search(len(e.freeRnk), func(k int) bool { return e.freeRnk[k] >= r }))
		e.proms[i] = append(e.proms[i], aliveAcc-a)
		e.savedPerWn[i] = append(e.savedPerWn[i], alive-R)
		e.saved[i] += alive - R
		e.r[i] = min(p.Limit(e.peak), R-f)
	}
	// The stack: touched pages on top, least recent first (a life's first
	// touch lowest, then by the touch before, then the larger ID), then the
	// window's frees leave it.
	e.fresh = append(append(e.fresh[:0], e.acc...), e.born...)
	prev := func(id uint32) int32 {
		if e.slot[id] < 0 {
			return -1
		}
		return e.last[id]
	}
	slices.SortFunc(e.fresh, func(x, y uint32) int {
		if c := cmp.Compare(prev(x), prev(y)); c != 0 {
			return c
		}
		return cmp.Compare(y, x)
	})
	if int(e.next)+len(e.fresh) > e.tree.size() {
		e.renumber(len(e.fresh))
	}
	for _, id := range e.fresh {
		if s := e.slot[id]; s >= 0 {
			e.tree.add(int(s), -1)
			e.stack--
		}
	}
	for _, id := range e.fresh {
		e.slot[id], e.last[id] = e.next, int32(w)
		e.tree.add(int(e.next), 1)
		e.next++
		e.stack++
		e.isAcc[id], e.isTouched[id] = false, false
	}
	for _, id := range win.Freed {
		if s := e.slot[id]; s >= 0 {
			e.tree.add(int(s), -1)
			e.slot[id] = -1
			e.stack--
		}
	}
}

// renumber gives the alive pages the slots 0.. in stack order and makes
// room for extra more.
func (e *lruEngine) renumber(extra int) {
	var ids []uint32
	for id, s := range e.slot {
		if s >= 0 {
			ids = append(ids, uint32(id))
		}
	}
	slices.SortFunc(ids, func(x, y uint32) int { return cmp.Compare(e.slot[x], e.slot[y]) })
	e.tree = newFenwick(max(2*(len(ids)+extra), 1024))
	for i, id := range ids {
		e.slot[id] = int32(i)
		e.tree.add(i, 1)
	}
	e.next = int32(len(ids))
}

// finish returns every setting's totals.
func (e *lruEngine) finish(int) (saved []int64, promotions, savedPerWindow [][]int64) {
	return e.saved, e.proms, e.savedPerWn
}

// The engine interface: an lru engine reads windows (window), not gaps.
func (e *lruEngine) newWindow(int)                                {}
func (e *lruEngine) gaps([]packedGap, []policy.Features, []int32) {}
func (e *lruEngine) group(int, bool, []histEntry)                 {}
func (e *lruEngine) needsGaps() bool                              { return false }
func (e *lruEngine) endWindow(int, int64)                         {}
func (e *lruEngine) needsFeatures() bool                          { return false }

// fenwick is a binary indexed tree of counts over slots 0..n-1.
type fenwick []int64

func newFenwick(n int) fenwick { return make(fenwick, n+1) }

func (f fenwick) size() int { return max(len(f)-1, 0) }

// add adds d at slot i.
func (f fenwick) add(i int, d int64) {
	for i++; i < len(f); i += i & -i {
		f[i] += d
	}
}

// prefix returns the sum of slots 0..i.
func (f fenwick) prefix(i int) int64 {
	var s int64
	for i++; i > 0; i -= i & -i {
		s += f[i]
	}
	return s
}
