package sim

import (
	"mdk/policy"
	"mdk/trace"
)

// Life is one page's life as SPEC section 1 defines it: the state every
// engine that follows lives window by window keeps. The simulator keeps it,
// and so does the agent, which applies the same rules to live pages; the
// rules are written here once.
type Life struct {
	Alive    bool
	Last     int             // last touch of the current life
	Prior    int             // prior reuse distance at Last (trace.Inf on the life's first touch)
	Features policy.Features // features at Last (what L-OPP scores)
	Next     int             // index in the page's Gaps of the gap starting at Last
}

// Touch records a touch in window k: an access, or a birth of a page not
// alive (a birth of an alive page is no touch). A touch of a page not alive
// starts a life; a touch of an alive one ends the gap since Last.
func (l *Life) Touch(k int) {
	if !l.Alive {
		l.Alive = true
		l.Prior = trace.Inf
	} else {
		l.Prior = k - l.Last
		l.Next++
	}
	l.Features = l.Features.Next(l.Prior)
	l.Last = k
}

// Free ends an alive page's life after the window of the free (a free of a
// page not alive is ignored by the caller): its open gap ends, so the next
// life's first gap is the next in Gaps.
func (l *Life) Free() {
	l.Alive = false
	l.Next++
}

// Gap is one gap of a page: it starts at a touch (Start), lasts Idle
// windows, and ends with an access (Closed) or with the life.
type Gap struct {
	Start, Idle int32 // windows: a trace has fewer than 2^31
	Closed      bool
}

// End returns the window after the gap's last idle one: the window of the
// access that closes it, or the first window after the life.
func (g Gap) End() int { return int(g.Start) + int(g.Idle) + 1 }

// Events is one window's events, per page, after SPEC section 1's
// precedence: an access wins over a birth in the same window.
type Events struct {
	Accessed, Born, Freed []uint32
}

// WindowEvents applies the precedence to one window.
func WindowEvents(w *trace.Window) Events {
	acc := make(map[uint32]bool, len(w.Accessed))
	for _, id := range w.Accessed {
		acc[id] = true
	}
	ev := Events{Accessed: w.Accessed, Freed: w.Freed}
	for _, id := range w.Born {
		if !acc[id] {
			ev.Born = append(ev.Born, id)
		}
	}
	return ev
}

// Gaps returns every page's gaps in time order (the oracle of the offline
// policies): a walk of the windows' events with the life rules of [Life]
// (an access wins over a birth; a free ends the life after its window).
// The gap starting at a page's Life.Last is gaps[page][Life.Next].
func Gaps(pages int, evs []Events) [][]Gap {
	gaps := make([][]Gap, pages)
	ls := make([]Life, pages)
	for k, ev := range evs {
		for _, id := range ev.Accessed {
			if l := &ls[id]; l.Alive {
				gaps[id] = append(gaps[id], Gap{Start: int32(l.Last), Idle: int32(k - l.Last - 1), Closed: true})
			}
			ls[id].Touch(k)
		}
		for _, id := range ev.Born {
			if l := &ls[id]; !l.Alive {
				l.Touch(k)
			}
		}
		for _, id := range ev.Freed {
			if l := &ls[id]; l.Alive {
				gaps[id] = append(gaps[id], Gap{Start: int32(l.Last), Idle: int32(k - l.Last), Closed: false})
				l.Free()
			}
		}
	}
	W := len(evs)
	for id, l := range ls {
		if l.Alive {
			gaps[id] = append(gaps[id], Gap{Start: int32(l.Last), Idle: int32(W - l.Last - 1), Closed: false})
		}
	}
	return gaps
}

// TraceGaps returns the gaps of every page of t ([Gaps]).
func TraceGaps(t *trace.Trace) [][]Gap {
	evs := make([]Events, len(t.Windows))
	for w := range t.Windows {
		evs[w] = WindowEvents(&t.Windows[w])
	}
	return Gaps(len(t.Pages), evs)
}
