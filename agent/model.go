package agent

import (
	"cmp"
	"slices"

	"mdk/sim"
	"mdk/trace"
)

// page is the agent's state of one page of the observed trace: its life
// under SPEC section 1 (sim.Life, the simulator's own rules) and what
// pagemap says of it.
type page struct {
	sim.Life
	out      bool // the agent put it out and pagemap confirmed it
	kout     bool // out, not by the agent (kernel reclaim)
	accessed bool // accessed in the current window
	// absent: the policy decided the page out in its current gap (the
	// simulator's absent page), whatever the kernel or a guard then did
	// with it: no candidate again until its next touch (decide.go), and
	// counted in the model's outcome (promoted, absent) meanwhile.
	absent bool
}

// model is the observed trace as the agent follows it: its pages, where
// each lives, and per target its pages in virtual page order.
type model struct {
	pages []page
	vpn   []uint64
	tgt   []int32
	order [][]uint32
	// promoted counts the current window's model promotions: alive pages
	// the policy had decided out, accessed (the simulator's rule).
	promoted int64
}

// track applies window k's touches (the track stage): new pages are placed
// with where (the tracker's Page), accesses touch their page, births touch
// pages not alive.
func (m *model) track(k int, win *trace.Window, where func(uint32) (int, uint64)) {
	for range win.New {
		id := uint32(len(m.pages))
		t, v := where(id)
		m.pages = append(m.pages, page{})
		m.vpn = append(m.vpn, v)
		m.tgt = append(m.tgt, int32(t))
		for len(m.order) <= t {
			m.order = append(m.order, nil)
		}
		m.order[t] = append(m.order[t], id)
	}
	if len(win.New) > 0 {
		for _, o := range m.order {
			slices.SortFunc(o, func(x, y uint32) int { return cmp.Compare(m.vpn[x], m.vpn[y]) })
		}
	}
	m.promoted = 0
	for _, id := range win.Accessed {
		p := &m.pages[id]
		if p.Alive && p.absent {
			m.promoted++
		}
		p.accessed, p.absent = true, false
		p.Touch(k)
	}
	for _, id := range win.Born {
		if p := &m.pages[id]; !p.Alive {
			p.absent = false
			p.Touch(k)
		}
	}
}

// free applies the window's frees: they end lives after the window.
func (m *model) free(win *trace.Window) {
	for _, id := range win.Freed {
		if p := &m.pages[id]; p.Alive {
			p.Free()
			p.out, p.kout, p.absent = false, false, false
		}
	}
}
