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
	"runtime"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// maxWalkers bounds the goroutines of the histogram walk.
const maxWalkers = 4

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
// The pass is a pipeline. The calling goroutine reads window w+1 while
// helpers start walking window w (trace.HistWalker), then joins them; it
// hands the window's gap histograms (or, for engines that need them, the
// gaps themselves, from a trace.Walker) on in chunks of bounded size; the
// policies' engines consume every chunk on up to GOMAXPROCS worker goroutines
// (each engine on one worker, so each sees the gaps in order).
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
	// The walk: a trace.Walker feeding gaps one by one when an engine
	// needs them, else a trace.HistWalker, on every core, counting them.
	var (
		start  func(*trace.Window) // begins walking a window
		wait   func()              // returns when it is walked
		finish func()              // ends the lives still alive
		counts func() trace.Counts
		hgs    []*trace.GapHistogram
	)
	newHist := func() *trace.GapHistogram { return trace.NewGapHistogram(len(classes.vals)+1, classes.class) }
	if perGap {
		wk := trace.NewWalker()
		var hg *trace.GapHistogram
		if hist {
			hg = newHist()
			hgs = append(hgs, hg)
		}
		var feats [][6]int32
		wk.OnGap = func(g trace.Gap) {
			var f *[6]int32
			if needFeat {
				f = &feats[g.Page]
			}
			p.gap(g, f)
			if hg != nil {
				hg.Add(g)
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
		start = func(w *trace.Window) {
			if hg != nil {
				hg.Grow(w.Index)
			}
			wk.Window(w)
		}
		wait, finish = func() {}, wk.Finish
		counts = func() trace.Counts { return wk.Counts }
	} else {
		// One histogram a goroutine; each is windows x classes cells, so
		// a many-core machine uses a few cores, not all.
		for range max(1, min(runtime.GOMAXPROCS(0), maxWalkers)) {
			hgs = append(hgs, newHist())
		}
		hw := trace.NewHistWalker(hgs)
		defer hw.Close()
		start, wait, finish = hw.Start, hw.Wait, hw.Finish
		counts = func() trace.Counts { return hw.Counts }
	}
	// Window w+1 is read while window w is walked.
	r = trace.Lookahead(r)
	read := func() (*trace.Window, error) {
		win, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err == nil {
			err = ctx.Err()
		}
		return win, err
	}
	var es []histEntry
	var accessed, alive []int64
	win, err := read()
	for win != nil && err == nil {
		p.mark(markNew, win.Index, 0)
		before := counts().AlivePageWins
		start(win)
		next, nerr := read()
		wait()
		a := int64(len(win.Accessed))
		accessed = append(accessed, a)
		alive = append(alive, counts().AlivePageWins-before)
		for _, hg := range hgs {
			es = hg.Drain(true, es[:0])
			p.group(win.Index, true, es)
			es = hg.Drain(false, es[:0])
			p.group(win.Index+1, false, es)
		}
		p.mark(markEnd, win.Index, a)
		if opts.Progress != nil {
			opts.Progress(win.Index+1, h.Windows)
		}
		win, err = next, nerr
	}
	if err != nil {
		p.stop()
		return nil, err
	}
	finish()
	for _, hg := range hgs {
		es = hg.Drain(false, es[:0])
		p.group(len(accessed), false, es)
	}
	p.stop()
	L := counts().AlivePageWins
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
	order, groups := result.ByPolicy(len(settings), func(i int) string { return settings[i].Policy() })
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
		idx := groups[name]
		var e engine
		switch settings[idx[0]].(type) {
		case policy.OPP:
			ps := make([]policy.OPP, len(idx))
			for k, i := range idx {
				ps[k] = settings[i].(policy.OPP)
			}
			e = newOPP(ps)
		case policy.PAW:
			ps := make([]policy.PAW, len(idx))
			for k, i := range idx {
				ps[k] = settings[i].(policy.PAW)
			}
			e = newPAW(ps, classes)
		case policy.PACE:
			ps := make([]policy.PACE, len(idx))
			for k, i := range idx {
				ps[k] = settings[i].(policy.PACE)
			}
			e = newPACE(ps, classes)
		default:
			ps := make([]policy.OneParam, len(idx))
			for k, i := range idx {
				p, ok := settings[i].(policy.OneParam)
				if !ok {
					return nil, nil, classAxis{}, fmt.Errorf("mpc: policy %s has no one-pass generator (it implements neither policy.OneParam nor a built-in engine)", name)
				}
				ps[k] = p
			}
			e = newOneParam(ps)
		}
		engines = append(engines, e)
		slots = append(slots, idx)
	}
	return engines, slots, classes, nil
}
