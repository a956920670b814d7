package collect

import (
	"mdk/linux"
	"mdk/trace"
)

// wasAccessed reports whether the present page e was accessed since the
// previous scan: its frame lost its idle bit, or (DAMON) it lies in a region
// seen accessed.
func (r *Recorder) wasAccessed(e entry) bool {
	if r.damon != nil {
		return r.damon.accessed(e.vpn)
	}
	return !r.idle(e)
}

// idle reports whether the page frame of e still has its idle bit.
func (r *Recorder) idle(e entry) bool {
	pfn := e.pme & linux.PagemapPFNMask
	return r.got[pfn/64]&(1<<(pfn%64)) != 0
}

// announce gives e a dense ID if it has none.
func (r *Recorder) announce(sp uint32, e *entry) uint32 {
	if e.id != noID {
		return e.id
	}
	p := trace.Page{Space: sp, Page: e.vpn}
	id, ok := r.ids[p]
	if !ok {
		id = uint32(r.pages)
		r.pages++
		r.ids[p] = id
		r.win.New = append(r.win.New, p)
	}
	e.id = id
	return id
}

// compare merges s.prev (scan k-1) and s.cur (scan k) into r.win. first is
// set for window 0, where every page of scan 0 is born.
func (r *Recorder) compare(sp uint32, s *space, first bool) {
	prev, cur := s.prev, s.cur
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		switch {
		case j == len(cur) || i < len(prev) && prev[i].vpn < cur[j].vpn:
			// gone since the previous scan
			p := &prev[i]
			if first {
				r.win.Born = append(r.win.Born, r.announce(sp, p))
			}
			r.win.Freed = append(r.win.Freed, r.announce(sp, p))
			i++
		case i == len(prev) || cur[j].vpn < prev[i].vpn:
			// new since the previous scan
			c := &cur[j]
			r.win.Born = append(r.win.Born, r.announce(sp, c))
			j++
		default:
			p, c := &prev[i], &cur[j]
			if first {
				r.win.Born = append(r.win.Born, r.announce(sp, p))
			}
			c.id = r.announce(sp, p)
			if c.pme&linux.PagemapPresent != 0 {
				if p.pme&linux.PagemapPresent == 0 || r.wasAccessed(*c) {
					r.win.Accessed = append(r.win.Accessed, c.id)
				}
			}
			i++
			j++
		}
	}
}
