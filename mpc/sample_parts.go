package mpc

import (
	"context"
	"errors"
	"io"
	"slices"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// sampledPartitions is generateSampled's pass with flat sub-samples
// (Options.GroupTotals, k >= 2) on a partitioned trace whose first
// partitions hold exactly the sample's pages (trace.PartitionsOf: a 1%
// sample of a trace with the default cuts is partitions 0 and 1), when
// every engine takes histograms: the reader decodes those partitions'
// windows apart, and one trace.GroupWalker walks them, each gap counted in
// its page's sub-sample's histogram (the page's group computed once, when
// it first appears). There is no merge of the partitions into one window,
// no split of the sample into sub-samples' windows, and one page state per
// partition instead of one per sub-sample. Each sub-sample's flat engines
// are fed its histograms on the caller's goroutine (direct: OPP's window by
// window, the others, which keep totals by cell, the whole pass's
// histogram at the end), the whole sample the sum of theirs
// (stream.feedWindow), as generateSampled's fed sample is: the results are
// generateSampled's, integer for integer (TestSampledPartitionsSame). The
// collector is off until the heap reaches 64 MiB (highGC).
//
// done is false, and nothing read, when the trace or the settings do not
// fit: generateSampled then splits the merged sample.
func sampledPartitions(ctx context.Context, pr trace.PartitionedReader, settings []policy.Setting, s trace.Sample, k int, opts Options) (out []*result.Result, done bool, err error) {
	h := pr.Header()
	parts := pr.Partitioning()
	if k < 2 || pr.Selected() != parts.Count {
		return nil, false, nil
	}
	n, exact := trace.PartitionsOf(parts, h.Sample, s)
	if !exact || n < 1 {
		return nil, false, nil
	}
	fed, classes, _, err := newScaledEngines(settings, s.Scale())
	if err != nil {
		return nil, true, err
	}
	defer fed.stop()
	if !fed.histogramsOnly() {
		return nil, false, nil
	}
	pr.SelectPartitions(n) // as trace.NewSampleSplit would
	gw, err := trace.NewGroupWalker(pr, s, k, len(classes.vals)+1, classes.class, h.Windows)
	if err != nil {
		return nil, false, nil // too many windows or classes to pack
	}
	defer highGC()()
	if d, ok := pr.(trace.PageDiscarder); ok {
		d.DiscardPages()
	}
	fed.p.size = subChunk // a window's summed entries: a few thousand
	groups := make([]*direct, k)
	for g := range groups {
		d, err := newDirectStream(settings, s.Scale()*int64(k), len(classes.vals)+1, h.Windows)
		if err != nil {
			return nil, true, err
		}
		groups[g] = d
	}
	room := newRoom(groups[0].st.tabled()*k + len(settings))
	if err := room.check(h.Windows); err != nil {
		return nil, true, err
	}
	budget := room.tableBudget()
	fed.reserve(h.Windows, &budget)
	budget = room.tableBudget()
	for _, d := range groups {
		d.st.reserve(h.Windows, &budget)
	}
	var sum PartialWindow
	var hs histSum
	var pw PartialWindow
	closed, open := make([][]trace.GapCount, k), make([][]trace.GapCount, k)
	// drain takes each group's gaps from gw into closed and open (the
	// closed ones if closed is set).
	drain := func(withClosed bool) {
		for g := range k {
			closed[g], open[g] = closed[g][:0], open[g][:0]
		}
		if withClosed {
			closed = gw.Drain(true, closed)
		}
		open = gw.Drain(false, open)
	}
	windows := 0
	for {
		first, nw, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, true, err
		}
		for w := first; w < first+nw; w++ {
			if err := ctx.Err(); err != nil {
				return nil, true, err
			}
			if w%1024 == 0 {
				if err := room.check(w + 1024); err != nil {
					return nil, true, err
				}
			}
			if err := gw.Window(w); err != nil {
				return nil, true, err
			}
			drain(true)
			for g, st := range groups {
				pw.Accessed, pw.Alive = gw.Accessed[g], gw.Alive[g]
				pw.Closed, pw.Open = closed[g], open[g]
				st.feed(w, &pw)
				sum.Accessed += pw.Accessed
				sum.Alive += pw.Alive
				sum.Closed = append(sum.Closed, pw.Closed...)
				sum.Open = append(sum.Open, pw.Open...)
			}
			sum.Closed, sum.Open = hs.merge(sum.Closed), hs.merge(sum.Open)
			fed.feedWindow(w, &sum)
			sum.reset()
			windows = w + 1
			if opts.Progress != nil {
				opts.Progress(windows, h.Windows)
			}
		}
	}
	gw.Finish()
	drain(false)
	for g, st := range groups {
		pw.Alive = gw.AlivePageWins[g]
		pw.Open = open[g]
		st.end(windows, &pw)
		sum.Alive += pw.Alive
		sum.Open = append(sum.Open, pw.Open...)
	}
	sum.Open = hs.merge(sum.Open)
	fed.feedEnd(windows, &sum)
	scale, pageSize := s.Scale(), int64(h.PageSize)
	gres := make([][]*result.Result, k)
	for g, d := range groups {
		gres[g] = d.st.results(settings, pageSize, scale*int64(k))
	}
	out = fed.results(settings, pageSize, scale)
	gs := make([]*result.Result, k)
	for i := range out {
		for g := range gres {
			gs[g] = gres[g][i]
		}
		out[i].Groups = slices.Clone(gs)
		out[i].SamplePPM, out[i].SamplePages = s.PPM, int64(gw.Pages)
	}
	return out, true, nil
}

// newDirectStream returns a stream of settings without a pipeline (and
// without a walk), flattened, whose engines the caller feeds on its own
// goroutine (direct.feed): a flat sub-sample's engines do little work a
// window, less than handing it to worker goroutines in chunks would cost.
// scale is as newScaledStream's; classes is the number of classes of the
// histograms fed, windows the header's count of windows.
func newDirectStream(settings []policy.Setting, scale int64, classes, windows int) (*direct, error) {
	engines, slots, _, err := plan(settings)
	if err != nil {
		return nil, err
	}
	for _, e := range engines {
		if e.needsGaps() || e.needsFeatures() {
			return nil, errors.New("mpc: a direct stream's engines take histograms only")
		}
		if o, ok := e.(*opp); ok {
			o.scale = scale
		}
	}
	// No pipeline to stop (stream.stop); spend drops its workers.
	st := &stream{engines: engines, slots: slots, p: &pipeline{}, stopped: true}
	st.flatten()
	d := &direct{st: st, classes: classes}
	// Room for the idle lengths of the header's windows, up to a bound
	// (a header may overstate): the cells grow by a quarter beyond it.
	n := (min(windows, 1<<12) + 2) * classes
	d.closed, d.open = make([]int64, n), make([]int64, n)
	for _, e := range engines {
		switch e.(type) {
		case *oneParam, *paw, *pace:
			// Flat, these add each histogram entry to a cell of its
			// idle length and class alone, whatever its window, and do
			// nothing at a window's start or end: they take the whole
			// pass's histogram, once, at the end.
			d.whole = append(d.whole, e)
		default:
			d.windowed = append(d.windowed, e)
		}
	}
	return d, nil
}

// direct is a flattened stream fed on the caller's goroutine (newDirectStream).
// Its engines that keep totals by cell only (whole) are fed, at the end, the
// sum of every window's histograms, kept in closed and open by (idle,
// class); the others (OPP's, whose budgets are per window) window by
// window, in the order a pipeline's chunk gives them (chunk.apply).
type direct struct {
	st              *stream
	whole, windowed []engine
	classes         int
	closed, open    []int64 // [idle*classes + class]
	es              []histEntry
}

// feed gives window w's counts and histograms to the stream's engines.
func (d *direct) feed(w int, sum *PartialWindow) {
	s := d.st
	s.t.accessed = append(s.t.accessed, sum.Accessed)
	s.t.alive = append(s.t.alive, sum.Alive)
	for _, e := range d.windowed {
		e.newWindow(w)
		e.group(w, true, sum.Closed)
		e.group(w+1, false, sum.Open)
		e.endWindow(w, sum.Accessed)
	}
	if len(d.whole) > 0 {
		d.closed = d.add(d.closed, sum.Closed)
		d.open = d.add(d.open, sum.Open)
	}
}

// add adds the entries es to the cells of their idle length and class.
func (d *direct) add(cells []int64, es []histEntry) []int64 {
	for _, x := range es {
		i := int(x.Idle)*d.classes + int(x.Class)
		if i >= len(cells) {
			cells = slices.Grow(cells, i+1-len(cells)+len(cells)/4)
			cells = cells[:cap(cells)] // zeros beyond the old length
		}
		cells[i] += x.N
	}
	return cells
}

// end gives the gaps still open after the last window (windows) and the
// alive page-windows (end.Alive) to the engines, and the whole pass's
// histograms to those that take them at once.
func (d *direct) end(windows int, end *PartialWindow) {
	s := d.st
	for _, e := range d.windowed {
		e.group(windows, false, end.Open)
	}
	d.open = d.add(d.open, end.Open)
	s.t.L = end.Alive
	for _, closed := range []bool{true, false} {
		cells := d.open
		if closed {
			cells = d.closed
		}
		d.es = d.es[:0]
		for i, n := range cells {
			if n != 0 {
				d.es = append(d.es, histEntry{Idle: int32(i / d.classes), Class: int32(i % d.classes), N: n})
			}
		}
		for _, e := range d.whole {
			e.group(windows, closed, d.es)
		}
	}
}
