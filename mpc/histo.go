package mpc

import "mdk/trace"

// Most gaps need not be seen one by one. Every closed gap walked in window j
// ends in j, and every open gap reported in window k ends in k+1 (or in W at
// the end), so within one window a gap is fully described, for the built-in
// engines, by its idle length g and the class of its prior reuse distance d
// among the P values of the grid policies (paw, pace): its start is end-g-1.
// The producer therefore counts the window's gaps by (g, class) in a dense
// histogram, and the engines process each distinct (g, class) once with its
// multiplicity. Engine work per window is then bounded by the distinct pairs
// (at most windows x classes), not by the records.

// histEntry is n gaps of idle length idle and prior class pc, all ending in
// the same window.
type histEntry struct {
	idle, pc int32
	n        int64
}

// classAxis maps a prior reuse distance to its class: the number of P values
// (of every grid policy together) below it.
type classAxis struct {
	*intAxis
}

// class returns the class of prior reuse distance d (trace.Inf allowed).
func (c classAxis) class(d int) int { return c.countLT(d) }

// project returns, for an engine whose P axis is own (a subset of the
// class axis), the table class -> #{own P < d}.
func (c classAxis) project(own *intAxis) []int {
	out := make([]int, len(c.vals)+1)
	for pc := range out {
		if pc == 0 {
			continue
		}
		// Class pc: vals[pc-1] < d <= vals[pc] (or d > every value). The
		// own values below d are those <= vals[pc-1].
		out[pc] = own.countLE(c.vals[pc-1])
	}
	return out
}

// histo is the producer's dense (idle, class) histogram of one window's
// closed gaps and of its open ones.
type histo struct {
	classes int // number of classes: len(axis values)+1
	closed  []int64
	open    []int64
	ctouch  []int32 // indexes of non-zero closed cells
	otouch  []int32
	axis    classAxis
}

func newHisto(axis classAxis) *histo {
	return &histo{classes: len(axis.vals) + 1, axis: axis}
}

// grow makes room for idle lengths up to maxIdle.
func (h *histo) grow(maxIdle int) {
	need := (maxIdle + 1) * h.classes
	if len(h.closed) < need {
		h.closed = append(h.closed, make([]int64, need-len(h.closed))...)
		h.open = append(h.open, make([]int64, need-len(h.open))...)
	}
}

func (h *histo) add(g trace.Gap) {
	i := int32(g.Idle*h.classes + h.axis.class(g.Prior))
	if g.Closed {
		if h.closed[i] == 0 {
			h.ctouch = append(h.ctouch, i)
		}
		h.closed[i]++
		return
	}
	if h.open[i] == 0 {
		h.otouch = append(h.otouch, i)
	}
	h.open[i]++
}

// drain appends the closed (or open) cells to es, clears them, and returns
// es.
func (h *histo) drain(closed bool, es []histEntry) []histEntry {
	cells, touched := h.open, &h.otouch
	if closed {
		cells, touched = h.closed, &h.ctouch
	}
	for _, i := range *touched {
		es = append(es, histEntry{idle: i / int32(h.classes), pc: i % int32(h.classes), n: cells[i]})
		cells[i] = 0
	}
	*touched = (*touched)[:0]
	return es
}

// groupOnly is embedded by the engines that take gaps by histogram only.
type groupOnly struct{}

func (groupOnly) needsGaps() bool              { return false }
func (groupOnly) gaps([]packedGap, [][6]int32) {} // never called: needsGaps is false
