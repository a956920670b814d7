// Package sim is mdk's reference simulator: the ground truth that every
// faster engine is checked against.
//
// It runs one policy setting over a whole trace held in memory, window by
// window, as a literal state machine over resident and absent pages (SPEC
// sections 1 and 2). It is written for clarity, not speed: each window it
// visits every alive page. It does not use trace.Walker; it applies the
// life semantics of SPEC section 1 itself, so that the engines built on the
// Walker are checked against an independent reading of the spec.
package sim

import (
	"fmt"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// page is the simulator's state of one page.
type page struct {
	alive    bool
	resident bool
	last     int             // last touch of the current life
	prior    int             // prior reuse distance at last (trace.Inf on the first touch)
	features policy.Features // features at last (what L-OPP scores)
	gaps     []gap           // the gaps of all the page's lives, in time order (oracle)
	next     int             // index in gaps of the gap starting at last
}

// gap is one gap as the oracle pre-pass saw it.
type gap struct {
	start, idle int
	closed      bool
}

// events is one window's events, per page, after SPEC section 1's
// precedence: an access wins over a birth in the same window.
type events struct {
	accessed, born, freed []uint32
}

func windowEvents(w *trace.Window) events {
	acc := make(map[uint32]bool, len(w.Accessed))
	for _, id := range w.Accessed {
		acc[id] = true
	}
	ev := events{accessed: w.Accessed, freed: w.Freed}
	for _, id := range w.Born {
		if !acc[id] {
			ev.born = append(ev.born, id)
		}
	}
	return ev
}

// Run simulates setting s on trace t.
func Run(t *trace.Trace, s policy.Setting) *result.Result { return RunObserved(t, s, nil) }

// RunObserved is Run, calling reclaimed (if not nil) for every reclaim: the
// page, the touch that started the gap, and the window at whose end the
// page was reclaimed. mdk verify uses it to check the eviction-decisions and
// eviction-times properties.
func RunObserved(t *trace.Trace, s policy.Setting, reclaimed func(page uint32, start, at int)) *result.Result {
	W := len(t.Windows)
	pages := make([]page, len(t.Pages))
	evs := make([]events, W)
	res := &result.Result{
		Policy:     s.Policy(),
		Params:     s.Params(),
		Promotions: make([]int64, W),
		Accessed:   make([]int64, W),
		PageSize:   int64(t.Header.PageSize),

		SavedPerWindow: make([]int64, W),
		AlivePerWindow: make([]int64, W),
	}
	for w := range t.Windows {
		evs[w] = windowEvents(&t.Windows[w])
		res.Accessed[w] = int64(len(t.Windows[w].Accessed))
	}
	oracle(pages, evs)

	dec := s.NewDecider(res.Accessed)
	var st policy.PageState
	for k := 0; k < W; k++ {
		ev := evs[k]
		// 1. Accesses: an absent alive page is promoted; a page not alive
		//    starts a life (its first access is compulsory).
		for _, id := range ev.accessed {
			p := &pages[id]
			if p.alive && !p.resident {
				res.Promotions[k]++
			}
			touch(p, k, !p.alive)
		}
		// 2. Births start a life; a birth of an alive page is ignored.
		for _, id := range ev.born {
			if p := &pages[id]; !p.alive {
				touch(p, k, true)
			}
		}
		// 3. Every alive page is alive in this window; every absent one
		//    saves it.
		for id := range pages {
			p := &pages[id]
			if !p.alive {
				continue
			}
			res.AlivePerWindow[k]++
			if !p.resident {
				res.SavedPerWindow[k]++
			}
		}
		// 4. At the end of the window the policy may reclaim resident
		//    pages. Pages are visited in dense-ID order; only OPP's shared
		//    budgets could care, and all pages it may reclaim now were
		//    touched in this very window, so their order does not matter.
		for id := range pages {
			p := &pages[id]
			if !p.alive || !p.resident {
				continue
			}
			g := p.gaps[p.next]
			if g.start != p.last {
				panic(fmt.Sprintf("sim: invariant violation: page %d touched at %d, oracle gap starts at %d", id, p.last, g.start))
			}
			st = policy.PageState{
				Page: uint32(id), Now: k, LastTouch: p.last, Prior: p.prior,
				Idle: g.idle, Closed: g.closed, Features: p.features,
			}
			if dec.Reclaim(&st) {
				p.resident = false
				if reclaimed != nil {
					reclaimed(uint32(id), p.last, k)
				}
			}
		}
		// 5. Frees end lives after this window; a free of a page not alive
		//    is ignored.
		for _, id := range ev.freed {
			if p := &pages[id]; p.alive {
				p.alive = false
				p.resident = false
				p.next++
			}
		}
	}
	for k := range W {
		res.Saved += res.SavedPerWindow[k]
		res.Alive += res.AlivePerWindow[k]
	}
	return res
}

// touch records a touch of p in window k; newLife starts a life.
func touch(p *page, k int, newLife bool) {
	if newLife {
		p.alive = true
		p.prior = trace.Inf
	} else {
		p.prior = k - p.last
		p.next++
	}
	p.features = p.features.Next(p.prior)
	p.resident = true
	p.last = k
}

// oracle fills every page's gaps by walking the trace once with the same
// life rules as Run, recording each gap's idle length and whether it ends
// with an access.
func oracle(pages []page, evs []events) {
	type life struct {
		alive bool
		last  int
	}
	ls := make([]life, len(pages))
	for k, ev := range evs {
		for _, id := range ev.accessed {
			l := &ls[id]
			if l.alive {
				pages[id].gaps = append(pages[id].gaps, gap{start: l.last, idle: k - l.last - 1, closed: true})
			}
			*l = life{alive: true, last: k}
		}
		for _, id := range ev.born {
			if l := &ls[id]; !l.alive {
				*l = life{alive: true, last: k}
			}
		}
		for _, id := range ev.freed {
			if l := &ls[id]; l.alive {
				pages[id].gaps = append(pages[id].gaps, gap{start: l.last, idle: k - l.last, closed: false})
				l.alive = false
			}
		}
	}
	W := len(evs)
	for id, l := range ls {
		if l.alive {
			pages[id].gaps = append(pages[id].gaps, gap{start: l.last, idle: W - l.last - 1, closed: false})
		}
	}
}
