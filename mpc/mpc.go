// Package mpc computes memory performance curves: the result of every
// setting of every requested policy, in one streaming pass over a trace.
//
// The method (the MDK paper's "efficient MPC generator"): each gap of the
// trace (trace.Walker) contributes to exactly the settings that reclaim it,
// and those form a contiguous range in the settings' aggression order, ending
// at the gap's critical parameter. So instead of deciding every gap for every
// setting, the generator adds the gap once, at its critical index, to a few
// accumulators (counts, sums of idle lengths and per-window promotions), and
// suffix sums along the aggression order give every setting's totals at the
// end. Where the saving depends on the setting (age's A, paw's wait, pace's
// A), the accumulators carry the count as well as the sum, and the saving is
// sum - x*count, exactly. OPP instead needs, per window, the idle lengths of
// the closed gaps ending there; it ranks them when the window is done.
//
// Cost: O(records + windows x settings), memory O(distinct pages + windows x
// settings). Results are integers, equal to the reference simulator's (package
// sim) for every setting; the tests check this on thousands of traces.
package mpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// Options tune a run.
type Options struct {
	// Progress, if set, is called after every window with the number of
	// windows done and, when the header knows it, the total (else 0).
	Progress func(done, total int)
}

// engine accumulates the results of one policy's settings.
type engine interface {
	// newWindow is called before window w's gaps.
	newWindow(w int)
	// gaps adds gaps in order, one by one, to an engine that needsGaps;
	// fs holds their features if needsFeatures.
	gaps(gs []packedGap, fs [][6]int32)
	// group adds gaps by histogram to an engine that does not needGaps:
	// all end in window end, and are closed or open.
	group(end int, closed bool, es []histEntry)
	needsGaps() bool
	// endWindow is called after window w's gaps, with |A_w|.
	endWindow(w int, accessed int64)
	// finish returns each setting's saved page-windows, per-window
	// promotions and per-window saved pages, in the order of the settings
	// given to the engine.
	finish(windows int) (saved []int64, promotions, savedPerWindow [][]int64)
	needsFeatures() bool
}

// Generate runs every setting over r in one pass and returns one result per
// setting, in the order given. Results share their Accessed and
// AlivePerWindow slices (they are the trace's, the same for every setting);
// treat them as read-only.
//
// The pass is a pipeline: one goroutine reads the trace and walks it into
// gaps, in chunks of bounded size; the policies' engines consume every chunk
// on up to GOMAXPROCS worker goroutines (each engine on one worker, so each
// sees the gaps in order).
func Generate(ctx context.Context, r trace.Reader, settings []policy.Setting, opts Options) ([]*result.Result, error) {
	engines, slots, classes, err := plan(settings)
	if err != nil {
		return nil, err
	}
	h := r.Header()
	if d, ok := r.(trace.PageDiscarder); ok {
		d.DiscardPages() // the engines need dense IDs only
	}
	needFeat, perGap, hist := false, false, false
	for _, e := range engines {
		needFeat = needFeat || e.needsFeatures()
		perGap = perGap || e.needsGaps()
		hist = hist || !e.needsGaps()
	}
	p := newPipeline(engines, needFeat)
	// The walkers: one, or, when every engine takes histograms, one per
	// core on its shard of the pages (the histograms are additive).
	shards := 1
	if !perGap && runtime.GOMAXPROCS(0) >= 2 {
		shards = 2
	}
	walkers := make([]*trace.Walker, shards)
	hgs := make([]*trace.GapHistogram, shards)
	for s := range walkers {
		walkers[s] = trace.NewShardWalker(uint32(s), uint(bits.Len(uint(shards-1))))
		hgs[s] = trace.NewGapHistogram(len(classes.vals)+1, classes.class)
	}
	wk, hg := walkers[0], hgs[0]
	var feats [][6]int32
	switch {
	case perGap && hist:
		wk.OnGap = func(g trace.Gap) {
			var f *[6]int32
			if needFeat {
				f = &feats[g.Page]
			}
			p.gap(g, f)
			hg.Add(g)
		}
	case perGap:
		wk.OnGap = func(g trace.Gap) {
			var f *[6]int32
			if needFeat {
				f = &feats[g.Page]
			}
			p.gap(g, f)
		}
	default:
		for s := range walkers {
			walkers[s].Hist = hgs[s]
		}
	}
	if needFeat {
		wk.OnTouch = func(page uint32, t, prior int, born bool) {
			for int(page) >= len(feats) {
				feats = append(feats, [6]int32{})
			}
			h := &feats[page]
			if prior == trace.Inf {
				*h = [6]int32{-1, -1, -1, -1, -1, -1}
				return
			}
			copy(h[1:], h[:5])
			h[0] = int32(prior)
		}
	}
	walk := newShardRunner(walkers)
	defer walk.stop()
	var es []histEntry
	alivePageWins := func() (n int64) {
		for _, w := range walkers {
			n += w.Counts.AlivePageWins
		}
		return n
	}
	var accessed, alive []int64
	for {
		win, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			p.stop()
			return nil, err
		}
		p.mark(markNew, win.Index, 0)
		for _, hg := range hgs {
			hg.Grow(win.Index)
		}
		before := alivePageWins()
		walk.window(win)
		a := int64(len(win.Accessed))
		accessed = append(accessed, a)
		alive = append(alive, alivePageWins()-before)
		if hist {
			for _, hg := range hgs {
				es = hg.Drain(true, es[:0])
				p.group(win.Index, true, es)
				es = hg.Drain(false, es[:0])
				p.group(win.Index+1, false, es)
			}
		}
		p.mark(markEnd, win.Index, a)
		if opts.Progress != nil {
			opts.Progress(win.Index+1, h.Windows)
		}
	}
	walk.window(nil) // Finish
	if hist {
		for _, hg := range hgs {
			es = hg.Drain(false, es[:0])
			p.group(len(accessed), false, es)
		}
	}
	p.stop()
	L := alivePageWins()
	W := len(accessed)
	out := make([]*result.Result, len(settings))
	for ei, e := range engines {
		saved, proms, perWin := e.finish(W)
		for k, i := range slots[ei] {
			out[i] = &result.Result{
				Policy:         settings[i].Policy(),
				Params:         settings[i].Params(),
				Promotions:     proms[k],
				Accessed:       accessed,
				Saved:          saved[k],
				Alive:          L,
				PageSize:       int64(h.PageSize),
				SavedPerWindow: perWin[k],
				AlivePerWindow: alive,
			}
		}
	}
	return out, nil
}

// plan groups settings into engines; slots[e] lists the indexes in settings
// handled by engine e, in the engine's order.
func plan(settings []policy.Setting) ([]engine, [][]int, classAxis, error) {
	type group struct {
		idx []int
	}
	order := []string{}
	groups := map[string]*group{}
	for i, s := range settings {
		name := s.Policy()
		g, ok := groups[name]
		if !ok {
			g = &group{}
			groups[name] = g
			order = append(order, name)
		}
		g.idx = append(g.idx, i)
	}
	for _, s := range settings {
		if v, ok := s.(interface{ Validate() error }); ok {
			if err := v.Validate(); err != nil {
				return nil, nil, classAxis{}, err
			}
		}
	}
	// The class axis: every P value of the grid policies.
	var ps []int
	for _, s := range settings {
		switch p := s.(type) {
		case policy.PAW:
			ps = append(ps, p.P)
		case policy.PACE:
			ps = append(ps, p.P)
		}
	}
	classes := classAxis{newIntAxis(ps)}
	var engines []engine
	var slots [][]int
	for _, name := range order {
		g := groups[name]
		var e engine
		switch settings[g.idx[0]].(type) {
		case policy.OPP:
			ps := make([]policy.OPP, len(g.idx))
			for k, i := range g.idx {
				ps[k] = settings[i].(policy.OPP)
			}
			e = newOPP(ps)
		case policy.PAW:
			ps := make([]policy.PAW, len(g.idx))
			for k, i := range g.idx {
				ps[k] = settings[i].(policy.PAW)
			}
			e = newPAW(ps, classes)
		case policy.PACE:
			ps := make([]policy.PACE, len(g.idx))
			for k, i := range g.idx {
				ps[k] = settings[i].(policy.PACE)
			}
			e = newPACE(ps, classes)
		default:
			ps := make([]policy.OneParam, len(g.idx))
			for k, i := range g.idx {
				p, ok := settings[i].(policy.OneParam)
				if !ok {
					return nil, nil, classAxis{}, fmt.Errorf("mpc: policy %s has no one-pass generator (it implements neither policy.OneParam nor a built-in engine)", name)
				}
				ps[k] = p
			}
			e = newOneParam(ps)
		}
		engines = append(engines, e)
		slots = append(slots, g.idx)
	}
	return engines, slots, classes, nil
}
