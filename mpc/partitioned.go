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
// counting into the worker's one histogram; segment by segment, the
// workers decode and walk their partitions' windows (decompressing a
// segment's payload when they reach it), each window's histogram drained
// into one of two outputs, and the caller merges the workers' outputs of a
// window (PartialWindow.add), hands them back and feeds the merge to the
// engines (stream.feedWindow): the merge of [Partial.Merge] and
// [Partial.Results]. A worker runs up to two windows ahead of the merge,
// so it does not wait for the caller's merge, feed and the other workers at
// every window, only at the segment's end, when the caller reads the next
// segment. done is false when the engines need more than histograms (a
// gap-by-gap engine such as lopp's, or lru's, which reads whole windows):
// Generate then reads the trace merged.
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
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for i, parts := range assignPartitions(pr.Partitioning(), P, nw) {
		ws[i] = newPartWorker(pr, classes, parts)
		ws[i].start(quit, &wg)
	}
	defer func() {
		close(quit)
		wg.Wait() // no worker walks a state that close unmaps
		for _, w := range ws {
			w.close()
		}
	}()
	h := pr.Header()
	var windows int
	var sum PartialWindow
	// merge sums the workers' next outputs into sum, and hands them back.
	merge := func() error {
		sum.reset()
		for _, pw := range ws {
			slot := <-pw.done
			if err := pw.errs[slot]; err != nil {
				return err
			}
			sum.add(&pw.outs[slot])
			pw.free <- slot
		}
		return nil
	}
	for {
		first, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, true, err
		}
		for _, pw := range ws {
			pw.jobs <- partJob{first: first, n: n}
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
			if err := merge(); err != nil {
				return nil, true, err
			}
			st.feedWindow(w, &sum)
			windows = w + 1
			if opts.Progress != nil {
				opts.Progress(windows, h.Windows)
			}
		}
	}
	for _, pw := range ws {
		pw.jobs <- partJob{finish: true}
	}
	if err := merge(); err != nil {
		return nil, true, err
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

// partJob is a worker's job in generatePartitioned: walk the n windows of
// a segment from first, or finish.
type partJob struct {
	first, n int
	finish   bool
}

// partWorker walks some partitions of a trace, on its own goroutine
// (start) in generatePartitioned, on the caller's in WalkPartitions.
type partWorker struct {
	pr    trace.PartitionedReader
	parts []int
	hws   []*trace.HistWalker // by position in parts
	hist  *trace.GapHistogram // shared by hws: they walk one after the other
	win   trace.Window
	// On its own goroutine: its jobs, and its two outputs, free to fill
	// (free) or filled with a window (done), in order.
	jobs       chan partJob
	free, done chan int
	outs       [2]PartialWindow
	errs       [2]error // the output's error: the worker's first, which stops it
	err        error    // the first error
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

// start runs the worker's jobs on a goroutine of its own, until quit is
// closed; wg counts the goroutine.
func (pw *partWorker) start(quit <-chan struct{}, wg *sync.WaitGroup) {
	pw.jobs = make(chan partJob)
	pw.free, pw.done = make(chan int, len(pw.outs)), make(chan int, len(pw.outs))
	for i := range pw.outs {
		pw.free <- i
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// one fills an output: false if quit is closed, or after an error.
		one := func(f func(o *PartialWindow)) bool {
			select {
			case <-quit:
				return false
			default:
			}
			var slot int
			select {
			case slot = <-pw.free:
			case <-quit:
				return false
			}
			f(&pw.outs[slot])
			pw.errs[slot] = pw.err
			pw.done <- slot // room for it: the outputs are two
			return pw.err == nil
		}
		for {
			var j partJob
			select {
			case j = <-pw.jobs:
			case <-quit:
				return
			}
			if j.finish {
				one(pw.finish)
				continue
			}
			for w := j.first; w < j.first+j.n; w++ {
				if !one(func(o *PartialWindow) { pw.window(w, o) }) {
					break
				}
			}
		}
	}()
}

// window decodes and walks window w of each of the worker's partitions,
// into o: its sums and histograms over the partitions.
func (pw *partWorker) window(w int, o *PartialWindow) {
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

// finish ends the lives still alive in the worker's partitions: o holds
// their open gaps and, as Alive, every alive page-window of the worker's
// partitions.
func (pw *partWorker) finish(o *PartialWindow) {
	o.Accessed, o.Alive, o.Closed = 0, 0, o.Closed[:0]
	for _, hw := range pw.hws {
		hw.Finish()
		o.Alive += hw.Counts.AlivePageWins
	}
	o.Open = pw.hist.Drain(false, o.Open[:0])
}

// close releases the walkers' page state; the worker's goroutine, if
// started, must have returned.
func (pw *partWorker) close() {
	for _, hw := range pw.hws {
		hw.Close()
	}
}
