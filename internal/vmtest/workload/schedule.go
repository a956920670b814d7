// Package workload is a program with a known page-access schedule, for
// recording tests on real kernels (internal/vmtest): which pages of its
// arena it touches, faults in and frees in each window is known exactly.
//
// The program (mdk-workload) maps an arena of Pages pages, faults in the
// pages Schedule.Initial says, prints "ready ARENA-START-HEX PAGES" and then
// obeys commands on standard input, one per line:
//
//	phase K [REPEAT-MS]   run phase K (touch, fault in, free its pages), reply "done K";
//	                      with REPEAT-MS, touch the pages again and again for that long;
//	                      with -1, until the next command arrives
//	touch K [REPEAT-MS]   only touch phase K's pages (again), reply "done K"
//	exit                  unmap the arena and exit
//
// A recording test sends phase K after the recorder's scan K, so that
// window K of the trace holds exactly phase K's events. The package's other
// workloads: pages shared between processes ([Share]) and mappings of known
// place, size and offset ([Maps]).
package workload

import (
	"math/rand/v2"
	"slices"
)

// Phase is what one window does to the arena, in arena page indexes.
type Phase struct {
	Touch []int // existing pages written (accessed)
	Alloc []int // pages faulted in (born)
	Free  []int // existing pages dropped with MADV_DONTNEED (freed)
}

// Schedule is a workload's whole plan: the pages faulted in before the
// recording starts and one phase per window. Phase 0 is empty (the
// recorder's first window only sees what exists).
type Schedule struct {
	Pages   int
	Initial []int
	Phases  []Phase
}

// NewSchedule returns the schedule of seed: half of the arena faulted in at
// the start; in each phase about a quarter of the existing pages touched, a
// twentieth of the absent pages faulted in and a twentieth of the existing,
// untouched pages freed.
func NewSchedule(seed uint64, pages, phases int) Schedule {
	return NewBlockSchedule(seed, pages, phases, 1)
}

// NewBlockSchedule is NewSchedule with the decisions taken per block of
// block consecutive pages (a workload with spatial locality, the kind
// DAMON's regions model); block 1 is NewSchedule.
func NewBlockSchedule(seed uint64, pages, phases, block int) Schedule {
	r := rand.New(rand.NewPCG(seed, 0x6d646b))
	s := Schedule{Pages: pages}
	exists := make([]bool, pages)
	var x int
	for i := range pages {
		if i%block == 0 {
			x = r.IntN(2)
		}
		if x == 0 {
			exists[i] = true
			s.Initial = append(s.Initial, i)
		}
	}
	s.Phases = append(s.Phases, Phase{})
	for k := 1; k < phases; k++ {
		var p Phase
		for i := range pages {
			if i%block == 0 {
				x = r.IntN(20)
			}
			switch {
			case exists[i] && x < 5:
				p.Touch = append(p.Touch, i)
			case exists[i] && x == 5:
				p.Free = append(p.Free, i)
			case !exists[i] && x == 0:
				p.Alloc = append(p.Alloc, i)
			}
		}
		for _, i := range p.Free {
			exists[i] = false
		}
		for _, i := range p.Alloc {
			exists[i] = true
		}
		s.Phases = append(s.Phases, p)
	}
	return s
}

// Exists returns the arena pages that exist after phase k (k = -1: before
// phase 0), sorted.
func (s Schedule) Exists(k int) []int {
	exists := make([]bool, s.Pages)
	for _, i := range s.Initial {
		exists[i] = true
	}
	for j := 0; j <= k && j < len(s.Phases); j++ {
		for _, i := range s.Phases[j].Free {
			exists[i] = false
		}
		for _, i := range s.Phases[j].Alloc {
			exists[i] = true
		}
	}
	var out []int
	for i, e := range exists {
		if e {
			out = append(out, i)
		}
	}
	return slices.Clip(out)
}
