// Package sim is mdk's reference simulator: the ground truth that every
// faster engine is checked against.
//
// It runs policy settings over a whole trace held in memory, window by
// window, as a literal state machine over resident and absent pages (SPEC
// sections 1 and 2). It is written for clarity, not speed: each window it
// visits every alive page. Several settings run side by side in one pass:
// a page's life (alive, last touch, prior reuse distances) does not depend
// on the setting, so they share it, and each setting keeps only which pages
// are resident and its decider. The settings' end-of-window steps run on
// every CPU, each setting on its own state. It does not use trace.Walker; it applies the
// life semantics of SPEC section 1 itself, so that the engines built on the
// Walker are checked against an independent reading of the spec.
package sim

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// page is the simulator's state of one page's life, the same for every
// setting.
type page struct {
	alive    bool
	last     int             // last touch of the current life
	prior    int             // prior reuse distance at last (trace.Inf on the first touch)
	features policy.Features // features at last (what L-OPP scores)
	gaps     []gap           // the gaps of all the page's lives, in time order (oracle)
	next     int             // index in gaps of the gap starting at last
}

// gap is one gap as the oracle pre-pass saw it.
type gap struct {
	start, idle int32 // windows: a trace has fewer than 2^31
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

// Observer watches a run of RunAll as it happens.
type Observer interface {
	// Reclaimed: setting i (an index into RunAll's settings) reclaimed
	// page's gap that started with the touch in window start, at the end
	// of window at.
	Reclaimed(i int, page uint32, start, at int)
	// GapEnded: page's gap that started in window start has ended (the
	// page was accessed or freed, or the trace ended). No setting reclaims
	// it after this call, and every reclaim of it came before.
	GapEnded(page uint32, start int)
}

// WindowObserver is an Observer that also hears of the end of every
// window, for a progress line; RunAll calls WindowDone(k, W) after window
// k's frees.
type WindowObserver interface {
	Observer
	WindowDone(k, windows int)
}

// Run simulates setting s on trace t.
func Run(t *trace.Trace, s policy.Setting) *result.Result { return RunObserved(t, s, nil) }

// RunObserved is Run, calling reclaimed (if not nil) for every reclaim: the
// page, the touch that started the gap, and the window at whose end the
// page was reclaimed.
func RunObserved(t *trace.Trace, s policy.Setting, reclaimed func(page uint32, start, at int)) *result.Result {
	var obs Observer
	if reclaimed != nil {
		obs = reclaimFunc(reclaimed)
	}
	rs, _ := RunAll(context.Background(), t, []policy.Setting{s}, obs)
	return rs[0]
}

// reclaimFunc is an Observer of one setting's reclaims.
type reclaimFunc func(page uint32, start, at int)

func (f reclaimFunc) Reclaimed(_ int, page uint32, start, at int) { f(page, start, at) }
func (f reclaimFunc) GapEnded(uint32, int)                        {}

// RunAll simulates every setting of ss on trace t, side by side in one pass
// over the windows, and calls obs (if not nil) for every reclaim and every
// gap's end; mdk verify uses it to check the nesting properties. Memory is
// the trace, its gaps, and per setting a resident flag per page and the
// per-window counts. It stops with ctx's error between windows.
func RunAll(ctx context.Context, t *trace.Trace, ss []policy.Setting, obs Observer) ([]*result.Result, error) {
	W := len(t.Windows)
	pages := make([]page, len(t.Pages))
	evs := make([]events, W)
	accessed := make([]int64, W)
	for w := range t.Windows {
		evs[w] = windowEvents(&t.Windows[w])
		accessed[w] = int64(len(t.Windows[w].Accessed))
	}
	oracle(pages, evs)

	res := make([]*result.Result, len(ss))
	resident := make([][]bool, len(ss)) // resident[i][id]: page id is resident under setting i
	decs := make([]policy.Decider, len(ss))
	for i, s := range ss {
		res[i] = &result.Result{
			Policy:     s.Policy(),
			Params:     s.Params(),
			Promotions: make([]int64, W),
			Accessed:   slices.Clone(accessed),
			PageSize:   int64(t.Header.PageSize),

			SavedPerWindow: make([]int64, W),
			AlivePerWindow: make([]int64, W),
		}
		resident[i] = make([]bool, len(pages))
		decs[i] = s.NewDecider(res[i].Accessed)
	}
	reclaimed := make([][]uint32, len(ss))
	for k := 0; k < W; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ev := evs[k]
		// 1. Accesses: an absent alive page is promoted; a page not alive
		//    starts a life (its first access is compulsory).
		for _, id := range ev.accessed {
			p := &pages[id]
			for i := range ss {
				if p.alive && !resident[i][id] {
					res[i].Promotions[k]++
				}
				resident[i][id] = true
			}
			if p.alive && obs != nil {
				obs.GapEnded(id, p.last)
			}
			touch(p, k, !p.alive)
		}
		// 2. Births start a life; a birth of an alive page is ignored.
		for _, id := range ev.born {
			if p := &pages[id]; !p.alive {
				touch(p, k, true)
				for i := range ss {
					resident[i][id] = true
				}
			}
		}
		// 3 and 4, for each setting. Settings are independent here: each
		// reads the shared lives and changes only its own residency,
		// counts and decider, so they run on every CPU; their reclaims are
		// reported afterwards, in setting order.
		parallel(len(ss), func(i int) {
			reclaimed[i] = endWindow(k, pages, resident[i], res[i], decs[i], reclaimed[i][:0])
		})
		if obs != nil {
			for i := range ss {
				for _, id := range reclaimed[i] {
					obs.Reclaimed(i, id, pages[id].last, k)
				}
			}
		}
		// 5. Frees end lives after this window; a free of a page not alive
		//    is ignored.
		for _, id := range ev.freed {
			if p := &pages[id]; p.alive {
				if obs != nil {
					obs.GapEnded(id, p.last)
				}
				p.alive = false
				p.next++
				for i := range ss {
					resident[i][id] = false
				}
			}
		}
		if wo, ok := obs.(WindowObserver); ok {
			wo.WindowDone(k, W)
		}
	}
	if obs != nil {
		for id := range pages {
			if p := &pages[id]; p.alive {
				obs.GapEnded(uint32(id), p.last)
			}
		}
	}
	for _, r := range res {
		for k := range W {
			r.Saved += r.SavedPerWindow[k]
			r.Alive += r.AlivePerWindow[k]
		}
	}
	return res, nil
}

// endWindow runs steps 3 and 4 of window k for one setting: it counts the
// alive and saved pages, then lets the decider reclaim resident pages, and
// returns the reclaimed pages appended to reclaimed.
func endWindow(k int, pages []page, resident []bool, res *result.Result, dec policy.Decider, reclaimed []uint32) []uint32 {
	// 3. Every alive page is alive in this window; every absent one saves
	//    it.
	for id := range pages {
		if !pages[id].alive {
			continue
		}
		res.AlivePerWindow[k]++
		if !resident[id] {
			res.SavedPerWindow[k]++
		}
	}
	// 4. At the end of the window the policy may reclaim resident pages.
	//    Pages are visited in dense-ID order; only OPP's shared budgets
	//    could care, and all pages it may reclaim now were touched in this
	//    very window, so their order does not matter.
	var st policy.PageState
	for id := range pages {
		p := &pages[id]
		if !p.alive || !resident[id] {
			continue
		}
		g := p.gaps[p.next]
		if int(g.start) != p.last {
			panic(fmt.Sprintf("sim: invariant violation: page %d touched at %d, oracle gap starts at %d", id, p.last, g.start))
		}
		st = policy.PageState{
			Page: uint32(id), Now: k, LastTouch: p.last, Prior: p.prior,
			Idle: int(g.idle), Closed: g.closed, Features: p.features,
		}
		if dec.Reclaim(&st) {
			resident[id] = false
			reclaimed = append(reclaimed, uint32(id))
		}
	}
	return reclaimed
}

// parallel calls f(0), ..., f(n-1) on up to GOMAXPROCS goroutines and
// returns when all have returned.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
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
				pages[id].gaps = append(pages[id].gaps, gap{start: int32(l.last), idle: int32(k - l.last - 1), closed: true})
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
				pages[id].gaps = append(pages[id].gaps, gap{start: int32(l.last), idle: int32(k - l.last), closed: false})
				l.alive = false
			}
		}
	}
	W := len(evs)
	for id, l := range ls {
		if l.alive {
			pages[id].gaps = append(pages[id].gaps, gap{start: int32(l.last), idle: int32(W - l.last - 1), closed: false})
		}
	}
}
