package mpc

import (
	"mdk/policy"
	"mdk/trace"
)

// Most gaps need not be seen one by one. Every closed gap walked in window j
// ends in j, and every open gap reported in window k ends in k+1 (or in W at
// the end), so within one window a gap is fully described, for the built-in
// engines, by its idle length g and the class of its prior reuse distance d
// among the P values of the grid policies (paw, pace): its start is end-g-1.
// The walker therefore counts the window's gaps by (g, class) in a dense
// histogram (trace.GapHistogram), and the engines process each distinct (g, class) once with its
// multiplicity. Engine work per window is then bounded by the distinct pairs
// (at most windows x classes), not by the records.

// histEntry is n gaps of one idle length and prior class, all ending in the
// same window (counted by the walker: trace.GapHistogram).
type histEntry = trace.GapCount

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

// groupOnly is embedded by the engines that take gaps by histogram only.
type groupOnly struct{}

func (groupOnly) needsGaps() bool                              { return false }
func (groupOnly) gaps([]packedGap, []policy.Features, []int32) {} // never called: needsGaps is false
