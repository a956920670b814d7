package mpc

import (
	"context"
	"fmt"
	"slices"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// DefaultGroups is the number of sub-samples of a sampled run.
const DefaultGroups = 10

// subChunk is the size of a sub-sample's pipeline chunks (pipeline.size):
// a sub-sample holds a few thousand gaps and histogram entries a window,
// and its k pipelines' chunks of the default size would cost more to
// allocate and fault in than the sub-samples' engines.
const subChunk = chunkGaps / 16

// generateSampled runs every setting on the pages that s keeps, in one pass
// over r, as k disjoint random sub-samples of the sample
// (trace.SampleSplit) and, for the settings whose engines do not merge, the
// whole sample. Each page is in or out for the whole trace, so its lives
// and gaps are exact, and OPP's per-window budgets are taken on the
// sample's own accessed counts. The results are the whole sample's, every
// count multiplied by 1/rate; each holds the k sub-samples' results (counts
// multiplied by k/rate) as Groups, for the error bounds
// (result.Result.Bound).
//
// The sub-samples partition the sample's pages, and the engines of age,
// vmin, paw, pace, plug-in policies and lopp add up what each gap
// contributes (mergeable), so the sample's result of those settings is the
// sum of its sub-samples' (sumGroups), integer for integer; only the other
// settings (OPP, whose budgets are taken on the whole sample's accessed
// counts) run on the whole sample too. Without sub-samples (k = 0) every
// setting runs on the sample.
//
// With opts.GroupTotals the sub-samples keep their totals only (flat
// engines: per cell of a parameter axis or grid a count, a sum and the
// promotions, no per-window tables; result.Result.TotalsOnly), and every
// setting runs on the whole sample, with its per-window tables: one
// engines' pass with per-window tables instead of k.
//
// The sub-samples' walks run on the calling goroutine, beside the sample's
// helpers; their engines have pipelines of their own. So the cost is up to
// two walks of the sampled records (the sample's and the sub-samples') and
// k times the engines' per-window work (plus the unmergeable engines' once
// more), or with opts.GroupTotals the engines' per-window work once and k
// times their per-gap work.
func generateSampled(ctx context.Context, r trace.Reader, settings []policy.Setting, s trace.Sample, opts Options) ([]*result.Result, error) {
	k := opts.Groups
	switch {
	case k == 0:
		k = DefaultGroups
	case k == 1:
		k = 0
	case k < 0 || k > trace.MaxSampleGroups:
		return nil, fmt.Errorf("mpc: %d sub-samples: want 2 .. %d (or 1 for none)", k, trace.MaxSampleGroups)
	}
	flat := opts.GroupTotals && k > 0
	whole := make([]int, 0, len(settings)) // settings run on the whole sample
	if k == 0 || flat {
		for i := range settings {
			whole = append(whole, i)
		}
	} else {
		m, err := mergeable(settings)
		if err != nil {
			return nil, err
		}
		for i := range settings {
			if !m[i] {
				whole = append(whole, i)
			}
		}
	}
	if pr, ok := r.(trace.PartitionedReader); ok && flat {
		if out, done, err := sampledPartitions(ctx, pr, settings, s, k, opts); done {
			return out, err
		}
	}
	sp, err := trace.NewSampleSplit(r, s, k)
	if err != nil {
		return nil, fmt.Errorf("mpc: %w", err)
	}
	sp.DiscardPages()
	// streams[0] is the whole sample's (nil if it has no settings to run),
	// streams[1+g] sub-sample g's.
	streams := make([]*stream, 1+k)
	defer func() {
		for _, st := range streams {
			if st != nil {
				st.close()
			}
		}
	}()
	wholeSettings := make([]policy.Setting, len(whole))
	for j, i := range whole {
		wholeSettings[j] = settings[i]
	}
	// fed, if not nil, is the whole sample's stream, without a walk of its
	// own: with flat sub-samples of the same settings and engines that
	// take histograms only, it is fed the sum of the sub-samples' walks
	// (their pages partition the sample's, so its gaps are theirs, as a
	// partitioned trace's are its partitions': generatePartitioned), and
	// the sample's records are walked once, not twice.
	var fed *stream
	var sum PartialWindow
	if flat {
		st, _, _, err := newScaledEngines(wholeSettings, s.Scale())
		if err != nil {
			return nil, err
		}
		if st.histogramsOnly() {
			fed = st
			fed.p.size = subChunk // a window's summed entries: a few thousand
			defer fed.stop()
			sp.GroupsOnly() // the sample is its sub-samples' sum
		} else {
			st.stop()
		}
	}
	for i := range streams {
		walkers, scale, ss := maxWalkers, s.Scale(), wholeSettings
		if i > 0 {
			walkers, scale, ss = 1, scale*int64(k), settings
		} else if len(whole) == 0 || fed != nil {
			continue
		}
		st, err := newScaledStream(ss, walkers, scale)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			st.p.size = subChunk
			if flat {
				st.flatten()
			}
			if fed != nil {
				st.sink = &sum
			}
		}
		streams[i] = st
	}
	first := 0
	if streams[0] == nil {
		first = 1
	}
	ptrs := [2][]*trace.Window{make([]*trace.Window, 1+k), make([]*trace.Window, 1+k)}
	cur := 0
	read := func() ([]*trace.Window, error) {
		ws, err := sp.Read()
		if err != nil {
			return nil, err
		}
		p := ptrs[cur]
		cur ^= 1
		for i := range ws {
			p[i] = &ws[i]
		}
		return p[first:], nil
	}
	h := sp.Header()
	tabled := len(settings) // settings with per-window tables in a sub-sample
	if flat {
		tabled = streams[1].tabled()
	}
	room := newRoom(tabled*k + len(whole))
	if err := room.check(h.Windows); err != nil {
		return nil, err
	}
	progress := opts.Progress
	var hs histSum
	if fed != nil {
		budget := room.tableBudget()
		fed.reserve(h.Windows, &budget)
		// After each window's sub-samples (pass calls progress then).
		progress = func(done, total int) {
			sum.Closed, sum.Open = hs.merge(sum.Closed), hs.merge(sum.Open)
			fed.feedWindow(done-1, &sum)
			sum.reset()
			if opts.Progress != nil {
				opts.Progress(done, total)
			}
		}
	}
	if err := pass(ctx, read, streams[first:], h.Windows, progress, room); err != nil {
		return nil, err
	}
	scale, pageSize := s.Scale(), int64(h.PageSize)
	sample := streams[0]
	if fed != nil {
		sum.Open = hs.merge(sum.Open)
		fed.feedEnd(len(streams[1].t.accessed), &sum)
		sample = fed
	}
	groups := make([][]*result.Result, k)
	for g, st := range streams[1:] {
		groups[g] = st.results(settings, pageSize, scale*int64(k))
	}
	out := make([]*result.Result, len(settings))
	if sample != nil {
		for j, x := range sample.results(wholeSettings, pageSize, scale) {
			out[whole[j]] = x
		}
	}
	if k > 0 {
		t := sumTotals(streams[1:], scale)
		gs := make([]*result.Result, k)
		for i := range out {
			for g := range groups {
				gs[g] = groups[g][i]
			}
			if out[i] == nil {
				out[i] = sumGroups(gs, t, pageSize)
			}
			out[i].Groups = slices.Clone(gs)
		}
	}
	for _, o := range out {
		o.SamplePPM, o.SamplePages = s.PPM, int64(sp.Kept())
	}
	return out, nil
}

// histSum sums histogram entries of the same idle length and class, in
// cells by (idle, class) that it clears as it goes (trace.GapHistogram's
// layout): the sub-samples' histograms of a window, each pair a few times,
// become the sample's, each pair once, for the engines to add each once.
type histSum struct {
	cells   []int64
	touched []int
}

// merge returns es with the entries of each (idle, class) pair summed
// into one, in place.
func (h *histSum) merge(es []histEntry) []histEntry {
	classes := 1
	for _, e := range es {
		classes = max(classes, int(e.Class)+1)
	}
	for _, e := range es {
		i := int(e.Idle)*classes + int(e.Class)
		if i >= len(h.cells) {
			h.cells = append(h.cells, make([]int64, i+1-len(h.cells))...)
		}
		if h.cells[i] == 0 {
			h.touched = append(h.touched, i)
		}
		h.cells[i] += e.N
	}
	out := es[:0]
	for _, i := range h.touched {
		if n := h.cells[i]; n != 0 {
			out = append(out, histEntry{Idle: int32(i / classes), Class: int32(i % classes), N: n})
		}
		h.cells[i] = 0
	}
	h.touched = h.touched[:0]
	return out
}

// A totaler is an engine that can keep its totals only (a flat stream's):
// flatten, before the pass, makes it keep no per-window tables, and
// finishTotals then returns each setting's saved page-windows and total
// promotions, in the order of finish, equal to the sums of finish's.
type totaler interface {
	flatten()
	finishTotals() (saved, promotions []int64)
}

// flatten makes the stream's engines keep their totals only where they can
// (totaler); the others keep their tables, summed at the end
// (finishTotals). Its results keep their totals only.
func (s *stream) flatten() {
	s.flat = true
	for _, e := range s.engines {
		if t, ok := e.(totaler); ok {
			t.flatten()
		}
	}
}

// tabled returns the number of settings whose engines keep per-window
// tables in a flattened stream (not totalers).
func (s *stream) tabled() int {
	n := 0
	for ei, e := range s.engines {
		if _, ok := e.(totaler); !ok {
			n += len(s.slots[ei])
		}
	}
	return n
}

// finishTotals returns each setting's saved page-windows and total
// promotions from an engine of a flattened stream: its totals, or for an
// engine that is not a totaler the sums of its per-window promotions.
func finishTotals(e engine, W int) (saved, proms []int64) {
	if a, ok := e.(totaler); ok {
		return a.finishTotals()
	}
	saved, perWin, _ := e.finish(W)
	proms = make([]int64, len(perWin))
	for k, p := range perWin {
		for _, x := range p {
			proms[k] += x
		}
	}
	return saved, proms
}

// mergeable reports, for each setting, whether its engine's results on
// disjoint sets of pages add up to its result on their union: true of the
// engines that add each gap to their tables on its own (age, vmin, paw,
// pace, plug-in policies, lopp and idle-time lopp), not of OPP's, whose
// per-window budgets depend on every page of the window.
func mergeable(settings []policy.Setting) ([]bool, error) {
	engines, slots, _, err := plan(settings)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(settings))
	for e, x := range engines {
		switch x.(type) {
		case *oneParam, *paw, *pace, *idle:
			for _, i := range slots[e] {
				out[i] = true
			}
		}
	}
	return out, nil
}

// sumTotals returns the whole sample's per-window accessed and alive counts
// and its alive page-windows, each the sum of the sub-samples' (whose pages
// partition the sample's) times scale.
func sumTotals(groups []*stream, scale int64) totals {
	var t totals
	for _, st := range groups {
		if t.accessed == nil {
			t.accessed = make([]int64, len(st.t.accessed))
			t.alive = make([]int64, len(st.t.alive))
		}
		for w, a := range st.t.accessed {
			t.accessed[w] += a * scale
		}
		for w, a := range st.t.alive {
			t.alive[w] += a * scale
		}
		t.L += st.t.L * scale
	}
	return t
}

// sumGroups returns the whole sample's result of a mergeable setting from
// its k sub-samples' results gs: each of their counts is the sub-sample's
// times k/rate, so the sample's (its count times 1/rate) is their sum
// divided by k, exactly. t holds the sample's totals (sumTotals).
func sumGroups(gs []*result.Result, t totals, pageSize int64) *result.Result {
	k := int64(len(gs))
	W := len(t.accessed)
	out := &result.Result{
		Policy: gs[0].Policy, Params: gs[0].Params, PageSize: pageSize,
		Accessed: t.accessed, AlivePerWindow: t.alive, Alive: t.L,
		Promotions: make([]int64, W), SavedPerWindow: make([]int64, W),
	}
	for _, g := range gs {
		out.Saved += g.Saved
		for w := range W {
			out.Promotions[w] += g.Promotions[w]
			out.SavedPerWindow[w] += g.SavedPerWindow[w]
		}
	}
	out.Saved /= k
	for w := range W {
		out.Promotions[w] /= k
		out.SavedPerWindow[w] /= k
	}
	return out
}
