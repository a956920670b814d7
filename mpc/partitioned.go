package mpc

import (
	"cmp"
	"context"
	"errors"
	"io"
	"runtime"
	"slices"
	"sync"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// generatePartitioned runs every setting over a partitioned trace
// (trace.PartitionedReader) with the pages' lives walked partition by
// partition on every core, and the engines fed the merged histograms: a
// page is in one partition, so its lives and gaps are those of the whole
// trace, and a window's gap histogram, accessed count and alive pages are
// the sums of its partitions'. The engines add up what they are given
// (OPP ranks a window's gaps and takes its budget on the merged count when
// the window ends), so the results are the unpartitioned pass's, integer
// for integer.
//
// Each of up to GOMAXPROCS workers owns some partitions (assignPartitions:
// about equal shares of the pages), one trace.HistWalker each (no helpers)
// counting into the worker's one histogram; window by window, the workers
// decode and walk their partitions' window (decompressing a segment's
// payload when they reach it) and drain their histograms while the caller
// waits, and the caller then merges what they found (PartialWindow.add)
// and feeds it to the engines (stream.feedWindow): the merge of
// [Partial.Merge] and [Partial.Results]. done is false when the engines
// need more than histograms (a gap-by-gap engine such as lopp's, or lru's,
// which reads whole windows): Generate then reads the trace merged.
func generatePartitioned(ctx context.Context, pr trace.PartitionedReader, settings []policy.Setting, opts Options, room room) (out []*result.Result, done bool, err error) {
	st, classes, _, err := newEngines(settings)
	if err != nil {
		return nil, true, err
	}
	if !st.histogramsOnly() {
		st.stop()
		return nil, false, nil
	}
	defer st.stop()
	budget := room.tableBudget()
	st.reserve(pr.Header().Windows, &budget)
	P := pr.Selected()
	nw := max(1, min(runtime.GOMAXPROCS(0), P))
	ws := make([]*partWorker, nw)
	for i, parts := range assignPartitions(pr.Partitioning(), P, nw) {
		ws[i] = newPartWorker(pr, classes, parts)
		ws[i].start()
	}
	defer func() {
		for _, w := range ws {
			w.close()
		}
	}()
	h := pr.Header()
	var windows int
	var wg sync.WaitGroup
	run := func(f func(w *partWorker)) {
		wg.Add(len(ws))
		for _, w := range ws {
			w.jobs <- func() { f(w); wg.Done() }
		}
		wg.Wait()
	}
	var sum PartialWindow
	for {
		first, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, true, err
		}
		for w := first; w < first+n; w++ {
			if err := ctx.Err(); err != nil {
				return nil, true, err
			}
			if w%1024 == 0 {
				if err := room.check(w + 1024); err != nil {
					return nil, true, err
				}
			}
			run(func(pw *partWorker) { pw.window(w) })
			sum.reset()
			for _, pw := range ws {
				if pw.err != nil {
					return nil, true, pw.err
				}
				sum.add(&pw.out)
			}
			st.feedWindow(w, &sum)
			windows = w + 1
			if opts.Progress != nil {
				opts.Progress(windows, h.Windows)
			}
		}
	}
	run(func(pw *partWorker) { pw.finish() })
	sum.reset()
	for _, pw := range ws {
		sum.add(&pw.out)
	}
	st.feedEnd(windows, &sum)
	return st.results(settings, int64(h.PageSize), 1), true, nil
}

// assignPartitions shares partitions 0 .. n-1 of parts among nw workers by
// their widths (their expected shares of the pages; 1 each if parts has no
// cuts), longest processing time first: widest first, each to the worker
// with the least width so far (the lowest-numbered of those), so that equal
// partitions go round-robin (p to worker p mod nw) and the default cuts
// (trace.DefaultCuts: a ladder of 10%, then 10% each with 12 partitions)
// give 2 workers equal shares. Each worker's partitions are in increasing
// order.
func assignPartitions(parts trace.Partitioning, n, nw int) [][]int {
	width := func(p int) uint64 {
		if len(parts.Cuts) <= p+1 {
			return 1
		}
		return parts.Width(p)
	}
	order := make([]int, n)
	for p := range order {
		order[p] = p
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(width(b), width(a)) })
	out := make([][]int, nw)
	load := make([]uint64, nw)
	for _, p := range order {
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
		out[w] = append(out[w], p)
		load[w] += width(p)
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

// partWorker walks some partitions of a trace, on its own goroutine
// (jobs) in generatePartitioned, on the caller's in WalkPartitions.
type partWorker struct {
	pr    trace.PartitionedReader
	parts []int
	hws   []*trace.HistWalker // by position in parts
	hist  *trace.GapHistogram // shared by hws: they walk one after the other
	win   trace.Window
	jobs  chan func()
	// out is the last window's sums and histograms over the worker's
	// partitions (after finish: the lives still alive at the end, their
	// open gaps and alive page-windows); err the first error.
	out PartialWindow
	err error
}

// newPartWorker returns a worker of partitions parts, its goroutine not
// started.
func newPartWorker(pr trace.PartitionedReader, classes classAxis, parts []int) *partWorker {
	pw := &partWorker{pr: pr, parts: parts}
	pw.hist = trace.NewGapHistogram(len(classes.vals)+1, classes.class)
	for range parts {
		pw.hws = append(pw.hws, trace.NewHistWalker([]*trace.GapHistogram{pw.hist}))
	}
	return pw
}

// start runs the worker's jobs on a goroutine of its own.
func (pw *partWorker) start() {
	pw.jobs = make(chan func())
	go func() {
		for f := range pw.jobs {
			f()
		}
	}()
}

// window decodes and walks window w of each of the worker's partitions,
// into out.
func (pw *partWorker) window(w int) {
	o := &pw.out
	o.Accessed, o.Alive = 0, 0
	if pw.err != nil {
		return
	}
	for k, p := range pw.parts {
		if err := pw.pr.PartitionWindow(p, &pw.win, true); err != nil {
			pw.err = err
			return
		}
		hw := pw.hws[k]
		before := hw.Counts.AlivePageWins
		hw.Window(&pw.win)
		o.Accessed += int64(len(pw.win.Accessed))
		o.Alive += hw.Counts.AlivePageWins - before
	}
	o.Closed = pw.hist.Drain(true, o.Closed[:0])
	o.Open = pw.hist.Drain(false, o.Open[:0])
}

// finish ends the lives still alive in the worker's partitions: out holds
// their open gaps and, as Alive, every alive page-window of the worker's
// partitions.
func (pw *partWorker) finish() {
	o := &pw.out
	o.Accessed, o.Alive, o.Closed = 0, 0, o.Closed[:0]
	for _, hw := range pw.hws {
		hw.Finish()
		o.Alive += hw.Counts.AlivePageWins
	}
	o.Open = pw.hist.Drain(false, o.Open[:0])
}

func (pw *partWorker) close() {
	if pw.jobs != nil {
		close(pw.jobs)
	}
	for _, hw := range pw.hws {
		hw.Close()
	}
}
