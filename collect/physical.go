package collect

import (
	"cmp"
	"slices"

	"mdk/linux"
	"mdk/trace"
)

// Tracker names how the recorder sees accesses.
type Tracker string

// The trackers.
const (
	TrackerIdle  Tracker = "idle"  // idle page tracking (/sys/kernel/mm/page_idle/bitmap)
	TrackerDamon Tracker = "damon" // DAMON, vaddr operations (/sys/kernel/mm/damon/admin)
)

// PageKey names what one page of a recorded trace is.
type PageKey string

// The page keys.
const (
	PagesVirtual  PageKey = "virtual"  // (space = pid index, virtual page number)
	PagesPhysical PageKey = "physical" // a page frame: (0, PFN), or (1, swap entry) while swapped out
)

// buildPhysical fills r.phys[0].cur with the present pages of every target,
// keyed by page frame number, and r.phys[1].cur with the swapped-out ones,
// keyed by swap entry (pagemap bits 0-54: type and offset), each once
// however many processes or virtual pages map it. The kernel reclaims a
// shared page once, so this is the count a reclaim policy acts on. A page
// that moves to another frame (migration, swap-in, copy-on-write) is a new
// page: the old one is freed, the new one born. A sample keeps or drops
// frames (and swap entries), not virtual pages.
func (r *Recorder) buildPhysical() {
	frames, swapped := r.phys[0], r.phys[1]
	frames.cur, swapped.cur = frames.cur[:0], swapped.cur[:0]
	sampled := !r.opt.Sample.All()
	for _, s := range r.spaces {
		for _, e := range s.cur {
			key := e.pme & linux.PagemapPFNMask
			present := e.pme&linux.PagemapPresent != 0
			if sampled {
				sp := uint32(1)
				if present {
					sp = 0
				}
				if !r.opt.Sample.Keep(trace.Page{Space: sp, Page: key}) {
					continue
				}
			}
			if present {
				frames.cur = append(frames.cur, entry{vpn: key, pme: e.pme, id: noID})
			} else {
				swapped.cur = append(swapped.cur, entry{vpn: key, pme: e.pme, id: noID})
			}
		}
	}
	for _, s := range r.phys {
		slices.SortFunc(s.cur, func(a, b entry) int { return cmp.Compare(a.vpn, b.vpn) })
		s.cur = slices.CompactFunc(s.cur, func(a, b entry) bool { return a.vpn == b.vpn })
	}
}
