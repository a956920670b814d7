package trace

import (
	"fmt"
	"math/bits"
	"slices"
)

// GroupWalker walks the selected partitions of a partitioned trace whose
// pages are exactly a sample (see [PartitionsOf]) and counts each page's
// gaps by its sub-sample ([Sample.Group]), as k [HistWalker]s over the
// sub-samples' pages (a [SampleSplit]'s groups) would count them into k
// [GapHistogram]s: the same gaps, by idle length and prior class, and the
// same accessed and alive counts per sub-sample and window. It needs no
// merge of the partitions' windows and no split of the sample: each
// partition keeps its own page state, in its own dense IDs, and each page's
// group, computed once, when the page first appears.
//
// A page's word packs its group beside its last touch and class (0: not
// alive, else (last touch + 1) | (group << cb | class) << shift, cb the
// class bits), so a gap finds its cell, (idle, group, class), in one array
// with no lookup of the group; a page's group is looked up only when a
// life starts.
//
// Per window the caller reads the segment ([PartitionedReader.NextSegment]
// when the last one is done), calls [GroupWalker.Window], then drains each
// group's gaps ([GroupWalker.Drain]) and reads Accessed and Alive; after
// the last window, [GroupWalker.Finish] counts the open gaps of the lives
// still alive, to drain.
type GroupWalker struct {
	// Accessed and Alive are each sub-sample's accessed and alive pages
	// in the window walked last (Accessed once the closed gaps are
	// drained).
	Accessed, Alive []int64
	// AlivePageWins is each sub-sample's alive page-windows so far (all of
	// them after Finish).
	AlivePageWins []int64
	// Pages is the number of pages walked so far.
	Pages int

	pr      PartitionedReader
	s       Sample
	k       int
	hi      int // the partitions walked: the first hi
	parts   []groupPart
	live    []int64 // by group: alive after the last window
	frees   []int64 // by group: the window's frees
	started []int64 // by group: the window's lives started by an access
	win     Window
	windows int
	class   func(d int) int
	classes int    // of the histograms
	cb      uint   // class bits
	stride  int    // cells per idle length: k << cb
	shift   uint   // the group and class bits start here
	low     uint32 // mask of the last-touch bits
	cls     []uint32
	inf     uint32 // class of an infinite distance, shifted
	closed  []int64
	open    []int64
	ctouch  []int // cells of closed that are not zero
	otouch  []int
}

// groupPart is one partition's page state, by its dense IDs, and its
// pages' groups.
type groupPart struct {
	st  []uint32
	grp []uint8
}

// NewGroupWalker returns a walker of pr's selected partitions, which must be
// its first ones and hold exactly s's pages (PartitionsOf(pr.Partitioning(),
// the header's sample, s) exact, and that many partitions selected:
// SelectPartitions), into k sub-samples (2 .. [MaxSampleGroups]), its gaps
// classed as a [GapHistogram] of classes and class would class them. windows
// is the most windows the walk may see (the header's count): the packed
// state must hold them, or NewGroupWalker fails (the caller then walks the
// sample another way).
func NewGroupWalker(pr PartitionedReader, s Sample, k, classes int, class func(d int) int, windows int) (*GroupWalker, error) {
	if k < 2 || k > MaxSampleGroups {
		return nil, fmt.Errorf("trace: %d sub-samples: want 2 .. %d", k, MaxSampleGroups)
	}
	cb := uint(bits.Len(uint(classes - 1)))
	gb := uint(bits.Len(uint(k - 1)))
	if cb+gb > 16 {
		return nil, fmt.Errorf("trace: %d classes and %d sub-samples: too many to pack", classes, k)
	}
	shift := 32 - cb - gb
	low := uint32(1)<<shift - 1
	if windows <= 0 || windows > int(low)-2 {
		return nil, fmt.Errorf("trace: %d windows: the packed state holds 1 .. %d", windows, int(low)-2)
	}
	gw := &GroupWalker{
		Accessed: make([]int64, k), Alive: make([]int64, k), AlivePageWins: make([]int64, k),
		pr: pr, s: s, k: k, hi: pr.Selected(),
		live: make([]int64, k), frees: make([]int64, k), started: make([]int64, k),
		class: class, classes: classes, cb: cb, stride: k << cb, shift: shift, low: low,
		inf: uint32(class(Inf)) << shift,
	}
	gw.parts = make([]groupPart, gw.hi)
	// Room for the windows up to a bound, so that the cells do not
	// grow by copying window by window (a header's count may overstate).
	n := (min(windows, 1<<12) + 1) * gw.stride
	gw.closed, gw.open = make([]int64, 0, n), make([]int64, 0, n)
	return gw, nil
}

// growCells returns c grown to n zero cells, by at least a quarter of its
// capacity when it must move.
func growCells(c []int64, n int) []int64 {
	if n > cap(c) {
		c = slices.Grow(c, max(n, cap(c)+cap(c)/4)-len(c))
	}
	return c[:n] // beyond the old length: zeros, never written
}

// Window decodes and walks window w of every selected partition (the
// segment's next: w must be the number of windows walked so far). Alive is
// then the window's, and Drain gives its gaps: the closed ones ending in w,
// the open ones ending in w+1.
func (gw *GroupWalker) Window(w int) error {
	if w != gw.windows {
		return fmt.Errorf("trace: GroupWalker fed window %d after %d windows", w, gw.windows)
	}
	gw.windows++
	for d := len(gw.cls); d <= w; d++ {
		gw.cls = append(gw.cls, uint32(gw.class(d))<<gw.shift)
	}
	if need := (w + 1) * gw.stride; len(gw.closed) < need {
		gw.closed, gw.open = growCells(gw.closed, need), growCells(gw.open, need)
	}
	clear(gw.frees)
	clear(gw.started)
	for p := range gw.hi {
		win := &gw.win
		if err := gw.pr.PartitionWindow(p, win, false); err != nil {
			return err
		}
		if win.Index != w {
			return fmt.Errorf("trace: partition %d: window %d where %d was expected", p, win.Index, w)
		}
		gp := &gw.parts[p]
		for _, pg := range win.New {
			gp.grp = append(gp.grp, uint8(gw.s.Group(pg, gw.k)))
			gp.st = append(gp.st, 0)
		}
		gw.Pages += len(win.New)
		gw.walk(gp, win, w)
	}
	for g := range gw.k {
		gw.Alive[g] = gw.live[g]
		gw.AlivePageWins[g] += gw.live[g]
		gw.live[g] -= gw.frees[g]
	}
	return nil
}

// walk walks one partition's window w: its accesses, births and frees, in
// SPEC order, as a HistWalker's packed chunk does. The frees are counted in
// gw.frees, taken from the alive pages once every partition is walked.
func (gw *GroupWalker) walk(gp *groupPart, win *Window, w int) {
	k := uint32(w) + 1
	st, grp, low, shift, inf, cls := gp.st, gp.grp, gw.low, gw.shift, gw.inf, gw.cls
	gshift := shift + gw.cb
	gmask := ^uint32(0) >> gshift << gshift
	stride := gw.stride
	cells, touch := gw.closed, gw.ctouch
	for _, id := range win.Accessed {
		s := st[id]
		if s == 0 {
			g := uint32(grp[id])
			st[id] = k | inf | g<<gshift
			gw.live[g]++
			gw.started[g]++
			continue
		}
		d := k - s&low // the reuse distance: >= 1
		cell := int(d-1)*stride + int(s>>shift)
		if cells[cell] == 0 {
			touch = append(touch, cell)
		}
		cells[cell]++
		st[id] = k | cls[d] | s&gmask
	}
	gw.ctouch = touch
	for _, id := range win.Born {
		if st[id] == 0 {
			g := uint32(grp[id])
			st[id] = k | inf | g<<gshift
			gw.live[g]++
		}
	}
	// The life ends in e = w+1: its open gap after the last touch i idles
	// e-i-1 = k - (i+1) windows.
	cells, touch = gw.open, gw.otouch
	for _, id := range win.Freed {
		s := st[id]
		if s == 0 {
			continue
		}
		cell := int(k-s&low)*stride + int(s>>shift)
		if cells[cell] == 0 {
			touch = append(touch, cell)
		}
		cells[cell]++
		st[id] = 0
		gw.frees[s>>gshift]++
	}
	gw.otouch = touch
}

// Finish ends every life still alive after the windows walked (at e = W,
// the windows walked: an open gap after the last touch i idles e - (i+1)
// windows), for Drain to give as open gaps.
func (gw *GroupWalker) Finish() {
	e := uint32(gw.windows)
	for p := range gw.hi {
		gp := &gw.parts[p]
		for x, s := range gp.st {
			if s != 0 {
				cell := int(e-s&gw.low)*gw.stride + int(s>>gw.shift)
				if gw.open[cell] == 0 {
					gw.otouch = append(gw.otouch, cell)
				}
				gw.open[cell]++
				gp.st[x] = 0
			}
		}
	}
}

// Drain appends the counts of the closed (or open) gaps of each group g to
// dst[g] (len(dst) >= k), clears them, and returns dst. Draining the
// closed gaps sets Accessed: a group's gaps closed in the window plus the
// lives that its accesses started.
func (gw *GroupWalker) Drain(closed bool, dst [][]GapCount) [][]GapCount {
	cells, touched := gw.open, &gw.otouch
	if closed {
		cells, touched = gw.closed, &gw.ctouch
		for g := range gw.k {
			gw.Accessed[g] = gw.started[g]
		}
	}
	cmask := 1<<gw.cb - 1
	for _, i := range *touched {
		idle, gc := i/gw.stride, i%gw.stride
		g := gc >> gw.cb
		n := cells[i]
		dst[g] = append(dst[g], GapCount{Idle: int32(idle), Class: int32(gc & cmask), N: n})
		if closed {
			gw.Accessed[g] += n
		}
		cells[i] = 0
	}
	*touched = (*touched)[:0]
	return dst
}
