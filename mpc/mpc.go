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
	"slices"

	"mdk/internal/memlimit"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// Options tune a run.
type Options struct {
	// Progress, if set, is called after every window with the number of
	// windows done and, when the header knows it, the total (else 0).
	Progress func(done, total int)
	// Sample, if set, runs on the pages it keeps only, and every count is
	// scaled by 1/rate (a trace's own Header.Sample applies without it).
	Sample trace.Sample
	// Groups is the number of sub-samples of a sampled run, for the error
	// bounds; 0 means DefaultGroups, 1 none.
	Groups int
	// GroupTotals makes a sampled run's sub-samples keep their totals only
	// (result.Result.TotalsOnly): enough for every bound that
	// result.Result.PrintedBound prints, not for their per-window arrays
	// (which tune and the fleet restrict to their training and evaluation
	// windows) nor for the bounds of per-window statistics. It is much
	// cheaper: see [generateSampled]. The sample's own results are the
	// same either way.
	GroupTotals bool
	// Censor drops the gaps still open at the end of the trace (lives not
	// ended by a free): they save nothing and cost nothing in every
	// setting, while their windows still count as alive. It is how a
	// controller's history curve treats gaps whose end lies in the future
	// (docs/policies.md, "Controllers"). Not for sampled runs.
	Censor bool
}

// engine accumulates the results of one policy's settings.
type engine interface {
	// newWindow is called before window w's gaps.
	newWindow(w int)
	// gaps adds gaps in order, one by one, to an engine that needsGaps;
	// fs holds their features if needsFeatures, ranks their touches' ranks
	// in their windows if an engine needs them ([ranker]).
	gaps(gs []packedGap, fs []policy.Features, ranks []int32)
	// group adds gaps by histogram to an engine that does not needGaps:
	// all end in window end, and are closed or open.
	group(end int, closed bool, es []histEntry)
	needsGaps() bool
	// endWindow is called after window w's gaps, with |A_w|.
	endWindow(w int, accessed int64)
	// finish returns each setting's saved page-windows, per-window
	// promotions and per-window saved pages, in the order of the settings
	// given to the engine. The slices are the caller's (results scales
	// them in place).
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
//
// On a sample of the pages (opts.Sample, or a trace whose header says it is
// sampled) the results are estimates with error bounds: see
// [generateSampled].
//
// While it runs, the garbage collector's target is GOGC=25 unless GOGC is
// set (passGCPercent): the heap is small and reused, and RSS counts. A
// sampled run keeps the process's target: its page state is the sample's,
// a small part of its memory, and at GOGC=25 the collections took 17% of
// the CPU of a 1% sample of the benchmark trace (docs/bench.md, "Sampling
// a partitioned trace"), for 5-10 MB less peak RSS; a sample that is a
// partitioned trace's first partitions runs with the collector off until
// its heap reaches 64 MiB (highGC).
func Generate(ctx context.Context, r trace.Reader, settings []policy.Setting, opts Options) ([]*result.Result, error) {
	h := r.Header()
	s, err := h.Sample.Within(opts.Sample)
	if err != nil {
		return nil, fmt.Errorf("mpc: %w", err)
	}
	if hasLRU(settings) && (!s.All() || opts.Censor) {
		return nil, errors.New("mpc: lru runs on every page of the whole trace: a capacity ranks all of a job's pages, so it has no estimate on a sample and no censored history")
	}
	if !s.All() {
		if opts.Censor {
			return nil, errors.New("mpc: Censor is not supported on a sample of the pages")
		}
		for _, x := range settings {
			if _, ok := x.(policy.LOPPRation); ok {
				return nil, fmt.Errorf("mpc: %s: a rationed lopp is not supported on a sample of the pages (its ration ranks every page of a window)", policy.String(x))
			}
		}
		return generateSampled(ctx, r, settings, s, opts)
	}
	defer lowGC()()
	if d, ok := r.(trace.PageDiscarder); ok {
		d.DiscardPages() // the engines need dense IDs only
	}
	if c, ok := r.(trace.NewCounter); ok {
		c.CountNew() // and the number of new pages, not the pages
	}
	room := newRoom(len(settings))
	if err := room.check(h.Windows); err != nil {
		return nil, err
	}
	if pr, ok := r.(trace.PartitionedReader); ok && pr.Selected() == pr.Partitioning().Count {
		if out, done, err := generatePartitioned(ctx, pr, settings, opts, room); done {
			return out, err
		}
	}
	st, err := newStream(settings, maxWalkers)
	if err != nil {
		return nil, err
	}
	defer st.close()
	st.censor = opts.Censor
	la := trace.Lookahead(r)
	read := func() ([]*trace.Window, error) {
		w, err := la.Read()
		return []*trace.Window{w}, err
	}
	if err := pass(ctx, read, []*stream{st}, h.Windows, opts.Progress, room); err != nil {
		return nil, err
	}
	return st.results(settings, int64(h.PageSize), 1), nil
}

// Per-window memory of a pass, measured (peak resident set over a million
// windows): about 320 bytes per window with one setting, 128 more per
// setting with pace's default grid (age's: 75).
const (
	BytesPerWindow        = 256
	BytesPerSettingWindow = 128
)

// room checks that the per-window tables of a pass fit in the memory
// available when it started.
type room struct {
	settings  int
	available int64
	known     bool
}

func newRoom(settings int) room {
	n, ok := memlimit.Available()
	return room{settings: settings, available: n, known: ok}
}

// check fails if windows windows would need more than the memory available.
func (r room) check(windows int) error {
	need := int64(windows) * (BytesPerWindow + BytesPerSettingWindow*int64(r.settings))
	if !r.known || need <= r.available {
		return nil
	}
	return fmt.Errorf("mpc: %d settings over %d windows need about %s for their per-window tables, more than the %s of memory available: use fewer settings (-p) or a shorter trace",
		r.settings, windows, memlimit.Bytes(need), memlimit.Bytes(r.available))
}

// totals are what one pass measures of the trace itself, the same for
// every setting.
type totals struct {
	accessed, alive []int64 // |A_w| and alive pages, per window
	L               int64   // alive page-windows
}

// A stream is one run of every setting over a sequence of windows: the
// engines, their walk and their pipeline. Generate has one; a sampled run
// has one for the sample and one for each sub-sample, fed in one pass.
type stream struct {
	engines []engine
	slots   [][]int
	wk      walk
	p       *pipeline
	t       totals
	es      []histEntry
	before  int64
	stopped bool
	censor  bool // drop the gaps still open at the end (Options.Censor)
	flat    bool // keep totals only (flatten)
	// sink, if not nil, also receives what the stream's walk finds: each
	// window's accessed and alive counts and gap histograms, and at the
	// end the open gaps and the alive page-windows (a sampled run's whole
	// sample, fed the sum of its sub-samples').
	sink *PartialWindow
	// rank, if not nil, scores the touches of each window so that the walk
	// ranks them (a rationed lopp's engine, [ranker]).
	rank *policy.LOPP
}

// newStream plans settings into engines, with a walk of up to walkers
// goroutines.
func newStream(settings []policy.Setting, walkers int) (*stream, error) {
	return newScaledStream(settings, walkers, 1)
}

// newScaledStream is newStream for a sample whose counts are scaled by
// scale (1/rate): the engines that estimate on the scaled counts (OPP's
// budgets) are told it.
func newScaledStream(settings []policy.Setting, walkers int, scale int64) (*stream, error) {
	s, classes, needFeat, err := newScaledEngines(settings, scale)
	if err != nil {
		return nil, err
	}
	s.wk = newWalk(s.engines, classes, s.p, needFeat, s.rank, walkers)
	return s, nil
}

// newScaledEngines is newEngines for a sample whose counts are scaled by
// scale (newScaledStream).
func newScaledEngines(settings []policy.Setting, scale int64) (*stream, classAxis, bool, error) {
	s, classes, needFeat, err := newEngines(settings)
	if err != nil {
		return nil, classAxis{}, false, err
	}
	for _, e := range s.engines {
		if o, ok := e.(*opp); ok {
			o.scale = scale
		}
	}
	return s, classes, needFeat, nil
}

// newEngines returns a stream without its walk: the settings planned into
// engines, and their pipeline; the class axis of their histograms, and
// whether an engine needs the gaps' features.
func newEngines(settings []policy.Setting) (*stream, classAxis, bool, error) {
	engines, slots, classes, err := plan(settings)
	if err != nil {
		return nil, classAxis{}, false, err
	}
	needFeat := false
	var rank *policy.LOPP
	for _, e := range engines {
		needFeat = needFeat || e.needsFeatures()
		if r, ok := e.(ranker); ok { // at most one: the lopp group's
			l := r.rankBy()
			rank = &l
		}
	}
	p := newPipeline(engines, needFeat, rank != nil)
	return &stream{engines: engines, slots: slots, p: p, rank: rank}, classes, needFeat, nil
}

// begin starts walking window win (and runs the engines that read
// windows, not gaps: lru's).
func (s *stream) begin(win *trace.Window) {
	for _, e := range s.engines {
		if l, ok := e.(*lruEngine); ok {
			l.window(win)
		}
	}
	s.p.mark(markNew, win.Index, 0)
	s.before = s.wk.counts().AlivePageWins
	s.wk.start(win)
}

// end waits for the walk of win and hands its gaps on.
func (s *stream) end(win *trace.Window) {
	s.wk.wait()
	a := int64(len(win.Accessed))
	s.t.accessed = append(s.t.accessed, a)
	s.t.alive = append(s.t.alive, s.wk.counts().AlivePageWins-s.before)
	if s.sink != nil {
		s.sink.Accessed += a
		s.sink.Alive += s.t.alive[len(s.t.alive)-1]
	}
	s.drain(win.Index, win.Index+1)
	s.p.mark(markEnd, win.Index, a)
}

// finish ends the lives still alive and stops the pipeline.
func (s *stream) finish() {
	s.wk.finish(s.censor)
	if s.censor {
		for _, hg := range s.wk.histograms() {
			s.es = hg.Drain(false, s.es[:0]) // dropped: censored
		}
	} else {
		s.drain(-1, len(s.t.accessed))
	}
	s.t.L = s.wk.counts().AlivePageWins
	if s.sink != nil {
		s.sink.Alive += s.t.L
	}
	s.stop()
}

func (s *stream) drain(closedEnd, openEnd int) {
	for _, hg := range s.wk.histograms() {
		if closedEnd >= 0 {
			s.es = hg.Drain(true, s.es[:0])
			s.p.group(closedEnd, true, s.es)
			if s.sink != nil {
				s.sink.Closed = append(s.sink.Closed, s.es...)
			}
		}
		s.es = hg.Drain(false, s.es[:0])
		s.p.group(openEnd, false, s.es)
		if s.sink != nil {
			s.sink.Open = append(s.sink.Open, s.es...)
		}
	}
}

// reserver is an engine whose per-window tables can be sized for a pass
// of a known number of windows at once, instead of growing window by
// window (and copying as they grow), within a budget of bytes.
type reserver interface {
	reserve(windows int, budget *int64)
}

// reserve sizes the engines' tables for windows windows, the header's
// count, within budget bytes (room.tableBudget, shared by a pass's
// streams), which it reduces; a table that does not fit grows as it is
// filled.
func (s *stream) reserve(windows int, budget *int64) {
	if windows <= 0 {
		return
	}
	for _, e := range s.engines {
		if r, ok := e.(reserver); ok {
			r.reserve(windows, budget)
		}
	}
}

// tableBudget is how many bytes a pass may reserve for its engines' tables
// up front (stream.reserve): half the memory available when it started, so
// that a header that claims more windows than its trace has can make a
// pass take that much, never more; nothing when that is not known.
func (r room) tableBudget() int64 {
	if !r.known {
		return 0
	}
	return r.available / 2
}

func (s *stream) stop() {
	if !s.stopped {
		s.stopped = true
		s.p.stop()
	}
}

// close stops the pipeline and the walk's goroutines.
func (s *stream) close() {
	s.stop()
	s.wk.close()
}

// pass reads every window (read returns one window per stream, each
// intact until the second read after it, or io.EOF) and walks it in its
// stream: window w+1 is read while window w is walked, and the gaps go on
// to the pipelines, one by one as the walk finds them, then, when the
// window is walked, as histograms. It finishes the streams (their
// pipelines stopped) when the windows are done.
func pass(ctx context.Context, read func() ([]*trace.Window, error), streams []*stream, total int, progress func(done, total int), room room) error {
	next := func() ([]*trace.Window, error) {
		ws, err := read()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err == nil {
			err = ctx.Err()
		}
		if err == nil && ws[0].Index%1024 == 0 {
			err = room.check(ws[0].Index + 1024)
		}
		return ws, err
	}
	budget := room.tableBudget()
	for _, s := range streams {
		s.reserve(total, &budget)
	}
	ws, err := next()
	for ws != nil && err == nil {
		for i, s := range streams {
			s.begin(ws[i])
		}
		nws, nerr := next()
		for i, s := range streams {
			s.end(ws[i])
		}
		if progress != nil {
			progress(ws[0].Index+1, total)
		}
		ws, err = nws, nerr
	}
	if err != nil {
		return err
	}
	for _, s := range streams {
		s.finish()
	}
	return nil
}

// results collects each engine's totals into one result per setting, in
// the order of settings, every count multiplied by scale. A flattened
// stream's results keep their totals only (result.Result.TotalsOnly), and
// the stream's per-window accessed and alive counts.
func (s *stream) results(settings []policy.Setting, pageSize, scale int64) []*result.Result {
	t := s.t
	W := len(t.accessed)
	out := make([]*result.Result, len(settings))
	accessed, alive, L := scaled(t.accessed, scale), scaled(t.alive, scale), t.L*scale
	s.spend(scale, func(ei int, e engine, n int64) {
		if s.flat {
			saved, proms := finishTotals(e, W)
			for k, i := range s.slots[ei] {
				out[i] = &result.Result{
					Policy: settings[i].Policy(), Params: settings[i].Params(), PageSize: pageSize,
					Accessed: accessed, AlivePerWindow: alive, Alive: L,
					Saved: saved[k] * n, TotalsOnly: true, PromotionTotal: proms[k] * n,
				}
			}
			return
		}
		saved, proms, perWin := e.finish(W)
		for k, i := range s.slots[ei] {
			out[i] = &result.Result{
				Policy:         settings[i].Policy(),
				Params:         settings[i].Params(),
				Promotions:     scaleInPlace(proms[k], n),
				Accessed:       accessed,
				Saved:          saved[k] * n,
				Alive:          L,
				PageSize:       pageSize,
				SavedPerWindow: scaleInPlace(perWin[k], n),
				AlivePerWindow: alive,
			}
		}
	})
	return out
}

// spend calls f for each engine of s (its index, and the multiplier of its
// counts: scale, or 1 for an engine that counts in the whole trace's
// units), then drops it: its tables are garbage.
func (s *stream) spend(scale int64, f func(ei int, e engine, n int64)) {
	for ei, e := range s.engines {
		n := scale
		if w, ok := e.(interface{ wholeUnits() bool }); ok && w.wholeUnits() {
			n = 1
		}
		f(ei, e, n)
		s.engines[ei] = nil
	}
	s.p.workers = nil
}

// scaled returns v multiplied by n: v itself if n is 1, else a copy.
func scaled(v []int64, n int64) []int64 {
	if n == 1 {
		return v
	}
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

// scaleInPlace multiplies v by n and returns it.
func scaleInPlace(v []int64, n int64) []int64 {
	if n != 1 {
		for i := range v {
			v[i] *= n
		}
	}
	return v
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
		// A rationed lopp's settings, and an idle-time lopp's, get engines
		// of their own; the plain ones of its group stay on the
		// one-parameter engine.
		var rationed, idled []int
		idx = slices.DeleteFunc(slices.Clone(idx), func(i int) bool {
			switch settings[i].(type) {
			case policy.LOPPRation:
				rationed = append(rationed, i)
			case policy.LOPPIdle:
				idled = append(idled, i)
			default:
				return false
			}
			return true
		})
		if len(idled) > 0 {
			ps := make([]policy.LOPPIdle, len(idled))
			for k, i := range idled {
				ps[k] = settings[i].(policy.LOPPIdle)
				if ps[k].Model != ps[0].Model {
					return nil, nil, classAxis{}, fmt.Errorf("mpc: idle-time lopp settings with two different models")
				}
			}
			engines = append(engines, newIdle(ps))
			slots = append(slots, idled)
		}
		if len(rationed) > 0 {
			ps := make([]policy.LOPPRation, len(rationed))
			for k, i := range rationed {
				ps[k] = settings[i].(policy.LOPPRation)
				if ps[k].Model != ps[0].Model {
					return nil, nil, classAxis{}, fmt.Errorf("mpc: rationed lopp settings with two different models")
				}
			}
			engines = append(engines, newRation(ps))
			slots = append(slots, rationed)
		}
		if len(idx) == 0 {
			continue
		}
		var e engine
		switch settings[idx[0]].(type) {
		case policy.LRU:
			ps := make([]policy.LRU, len(idx))
			for k, i := range idx {
				ps[k] = settings[i].(policy.LRU)
			}
			e = newLRU(ps)
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

// hasLRU reports whether settings has an lru setting.
func hasLRU(settings []policy.Setting) bool {
	for _, s := range settings {
		if _, ok := s.(policy.LRU); ok {
			return true
		}
	}
	return false
}
