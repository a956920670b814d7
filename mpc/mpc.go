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
	gaps(gs []packedGap, fs []policy.Features)
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
	needFeat := false
	for _, e := range engines {
		needFeat = needFeat || e.needsFeatures()
	}
	p := newPipeline(engines, needFeat)
	wk := newWalk(engines, classes, p, needFeat)
	defer wk.close()
	t, err := pass(ctx, trace.Lookahead(r), wk, p, h.Windows, opts.Progress)
	if err != nil {
		return nil, err
	}
	return results(settings, engines, slots, t, int64(h.PageSize)), nil
}

// totals are what one pass measures of the trace itself, the same for
// every setting.
type totals struct {
	accessed, alive []int64 // |A_w| and alive pages, per window
	L               int64   // alive page-windows
}

// pass walks every window of r (window w+1 is read while window w is
// walked; r is a trace.Lookahead) and hands its gaps on to the pipeline:
// the gaps one by one as the walk finds them, then, when the window is
// walked, its histograms. It stops the pipeline before it returns.
func pass(ctx context.Context, r trace.Reader, wk walk, p *pipeline, total int, progress func(done, total int)) (totals, error) {
	defer p.stop()
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
	var t totals
	var es []histEntry
	drain := func(closedEnd, openEnd int) {
		for _, hg := range wk.histograms() {
			if closedEnd >= 0 {
				es = hg.Drain(true, es[:0])
				p.group(closedEnd, true, es)
			}
			es = hg.Drain(false, es[:0])
			p.group(openEnd, false, es)
		}
	}
	win, err := read()
	for win != nil && err == nil {
		p.mark(markNew, win.Index, 0)
		before := wk.counts().AlivePageWins
		wk.start(win)
		next, nerr := read()
		wk.wait()
		a := int64(len(win.Accessed))
		t.accessed = append(t.accessed, a)
		t.alive = append(t.alive, wk.counts().AlivePageWins-before)
		drain(win.Index, win.Index+1)
		p.mark(markEnd, win.Index, a)
		if progress != nil {
			progress(win.Index+1, total)
		}
		win, err = next, nerr
	}
	if err != nil {
		return totals{}, err
	}
	wk.finish()
	drain(-1, len(t.accessed))
	t.L = wk.counts().AlivePageWins
	return t, nil
}

// results collects each engine's totals into one result per setting, in
// the order of settings.
func results(settings []policy.Setting, engines []engine, slots [][]int, t totals, pageSize int64) []*result.Result {
	W := len(t.accessed)
	out := make([]*result.Result, len(settings))
	for ei, e := range engines {
		saved, proms, perWin := e.finish(W)
		for k, i := range slots[ei] {
			out[i] = &result.Result{
				Policy:         settings[i].Policy(),
				Params:         settings[i].Params(),
				Promotions:     proms[k],
				Accessed:       t.accessed,
				Saved:          saved[k],
				Alive:          t.L,
				PageSize:       pageSize,
				SavedPerWindow: perWin[k],
				AlivePerWindow: t.alive,
			}
		}
	}
	return out
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
			// Every setting a policy.OneParam, or every one a
			// policy.FeatureParam, like the first.
			ps := make([]policy.Ordered, len(idx))
			_, byFeatures := settings[idx[0]].(policy.FeatureParam)
			for k, i := range idx {
				ok := false
				if byFeatures {
					_, ok = settings[i].(policy.FeatureParam)
				} else {
					_, ok = settings[i].(policy.OneParam)
				}
				if !ok {
					return nil, nil, classAxis{}, fmt.Errorf("mpc: policy %s has no one-pass generator (it implements neither policy.OneParam, policy.FeatureParam nor a built-in engine)", name)
				}
				ps[k] = settings[i].(policy.Ordered)
			}
			e = newOneParam(ps)
		}
		engines = append(engines, e)
		slots = append(slots, idx)
	}
	return engines, slots, classes, nil
}
