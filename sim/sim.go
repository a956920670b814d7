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

// page is the simulator's state of one page: its life (the same for every
// setting) and its gaps in time order (the oracle).
type page struct {
	Life
	gaps []Gap
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
	evs := make([]Events, W)
	accessed := make([]int64, W)
	for w := range t.Windows {
		evs[w] = WindowEvents(&t.Windows[w])
		accessed[w] = int64(len(t.Windows[w].Accessed))
	}
	for id, g := range Gaps(len(pages), evs) {
		pages[id].gaps = g
	}

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
	sc := newScan(len(pages))
	for k := 0; k < W; k++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ev := evs[k]
		// 1. Accesses: an absent alive page is promoted; a page not alive
		//    starts a life (its first access is compulsory).
		for _, id := range ev.Accessed {
			p := &pages[id]
			for i := range ss {
				if p.Alive && !resident[i][id] {
					res[i].Promotions[k]++
				}
				resident[i][id] = true
			}
			if p.Alive && obs != nil {
				obs.GapEnded(id, p.Last)
			}
			p.Touch(k)
		}
		// 2. Births start a life; a birth of an alive page is ignored.
		for _, id := range ev.Born {
			if p := &pages[id]; !p.Alive {
				p.Touch(k)
				for i := range ss {
					resident[i][id] = true
				}
			}
		}
		// 3 and 4, for each setting. Settings are independent here: each
		// reads the shared lives and changes only its own residency,
		// counts and decider, so they run on every CPU; their reclaims are
		// reported afterwards, in setting order.
		sc.start(ev.Freed, pages)
		parallel(len(ss), func(i int) {
			reclaimed[i] = endWindow(k, pages, resident[i], res[i], decs[i], sc, reclaimed[i][:0])
		})
		sc.done(ev.Freed)
		if obs != nil {
			for i := range ss {
				for _, id := range reclaimed[i] {
					obs.Reclaimed(i, id, pages[id].Last, k)
				}
			}
		}
		// 5. Frees end lives after this window; a free of a page not alive
		//    is ignored.
		for _, id := range ev.Freed {
			if p := &pages[id]; p.Alive {
				if obs != nil {
					obs.GapEnded(id, p.Last)
				}
				p.Free()
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
			if p := &pages[id]; p.Alive {
				obs.GapEnded(uint32(id), p.Last)
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
func endWindow(k int, pages []page, resident []bool, res *result.Result, dec policy.Decider, sc *scan, reclaimed []uint32) []uint32 {
	// 3. Every alive page is alive in this window; every absent one saves
	//    it.
	for id := range pages {
		if !pages[id].Alive {
			continue
		}
		res.AlivePerWindow[k]++
		if !resident[id] {
			res.SavedPerWindow[k]++
		}
	}
	if c, ok := dec.(policy.Capacity); ok {
		return capacity(k, pages, resident, c, sc, reclaimed)
	}
	// 4. At the end of the window the policy may reclaim resident pages.
	//    Pages are visited in dense-ID order; only OPP's shared budgets
	//    could care, and all pages it may reclaim now were touched in this
	//    very window, so their order does not matter. A WindowDecider (a
	//    rationed L-OPP) sees them all before it reclaims any.
	if _, ok := dec.(policy.WindowDecider); ok {
		var states []policy.PageState
		for id := range pages {
			if st, ok := stateOf(k, pages, resident, id); ok {
				states = append(states, st)
			}
		}
		reclaim := make([]bool, len(states))
		policy.DecideWindow(dec, res.Accessed[k], states, reclaim)
		for i, st := range states {
			if reclaim[i] {
				resident[st.Page] = false
				reclaimed = append(reclaimed, st.Page)
			}
		}
		return reclaimed
	}
	var st policy.PageState // one variable: &st escapes through the interface
	for id := range pages {
		var ok bool
		if st, ok = stateOf(k, pages, resident, id); ok && dec.Reclaim(&st) {
			resident[id] = false
			reclaimed = append(reclaimed, uint32(id))
		}
	}
	return reclaimed
}

// stateOf returns what the policy knows of page id at the end of window k,
// and false if the page is not alive or not resident.
func stateOf(k int, pages []page, resident []bool, id int) (policy.PageState, bool) {
	p := &pages[id]
	if !p.Alive || !resident[id] {
		return policy.PageState{}, false
	}
	g := p.gaps[p.Next]
	if int(g.Start) != p.Last {
		panic(fmt.Sprintf("sim: invariant violation: page %d touched at %d, oracle gap starts at %d", id, p.Last, g.Start))
	}
	return policy.PageState{
		Page: uint32(id), Now: k, LastTouch: p.Last, Prior: p.Prior,
		Idle: int(g.Idle), Closed: g.Closed, Features: p.Features,
	}, true
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

// scan is what a capacity limit needs of a scan point besides the pages:
// which pages the window frees, and the peak alive page count so far (the
// same in every setting).
type scan struct {
	freed []bool // freed[id]: page id is alive and freed in this window
	peak  int64  // the largest alive page count of the windows so far
}

func newScan(pages int) *scan { return &scan{freed: make([]bool, pages)} }

// start marks the window's frees of alive pages and counts its alive
// pages into the peak.
func (sc *scan) start(freed []uint32, pages []page) {
	for _, id := range freed {
		sc.freed[id] = pages[id].Alive
	}
	var alive int64
	for id := range pages {
		if pages[id].Alive {
			alive++
		}
	}
	sc.peak = max(sc.peak, alive)
}

// done clears the marks.
func (sc *scan) done(freed []uint32) {
	for _, id := range freed {
		sc.freed[id] = false
	}
}

// capacity runs step 4 for a capacity limit (policy.Capacity,
// docs/policies.md "lru"): of the resident alive pages not freed in window
// k, the Limit(peak) most recent stay resident, the others are reclaimed.
func capacity(k int, pages []page, resident []bool, c policy.Capacity, sc *scan, reclaimed []uint32) []uint32 {
	var cands []policy.PageState
	for id := range pages {
		p := &pages[id]
		if p.Alive && resident[id] && !sc.freed[id] {
			cands = append(cands, policy.PageState{Page: uint32(id), Now: k, LastTouch: p.Last, Prior: p.Prior})
		}
	}
	for _, st := range policy.RankLRU(cands, c.Limit(sc.peak)) {
		resident[st.Page] = false
		reclaimed = append(reclaimed, st.Page)
	}
	return reclaimed
}
