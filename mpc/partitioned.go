package mpc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
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
// counting into the worker's one histogram, and walks its partitions'
// windows one after the other, each window's histogram drained into one of
// partSlots outputs; the caller merges the workers' outputs of a window
// (PartialWindow.add), hands them back and feeds the merge to the engines
// (stream.feedWindow): the merge of [Partial.Merge] and [Partial.Results].
// When the trace is a file (trace.PartitionForker) each worker has a reader
// of its own (ForkPartitions) and reads the segments itself: it runs up
// to partSlots windows ahead of the slowest worker and waits for nothing
// else; else the workers share pr, segment by segment: the caller reads
// the next segment when every worker has walked the last (a barrier that,
// with two output slots, kept 2 workers at 1.66x one on the benchmark
// trace; docs/bench.md, "Workers with readers of their own"). done is
// false when the engines need more than histograms (a
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
	shares := assignPartitions(pr.Partitioning(), P, nw)
	// Each worker reads its own partitions through a reader of its own
	// when the trace is a file (trace.PartitionForker), else they share
	// pr, segment by segment.
	var forks []trace.PartitionedReader
	if f, ok := pr.(trace.PartitionForker); ok {
		forks = make([]trace.PartitionedReader, nw)
		for i, parts := range shares {
			if forks[i], err = f.ForkPartitions(parts); err != nil {
				forks = nil
				break
			}
		}
	}
	ws := make([]*partWorker, nw)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for i, parts := range shares {
		if forks != nil {
			ws[i] = newPartWorker(forks[i], classes, parts)
			ws[i].own = true
		} else {
			ws[i] = newPartWorker(pr, classes, parts)
		}
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
	// merge sums the workers' next outputs into sum, and hands them back:
	// end reports that they are the workers' last (finish).
	merge := func() (end bool, err error) {
		sum.reset()
		ends := 0
		for i, pw := range ws {
			slot := <-pw.done
			if err := pw.errs[slot]; err != nil {
				return false, err
			}
			if w := pw.wins[slot]; w < 0 {
				ends++
			} else if w != windows {
				return false, fmt.Errorf("mpc: partition worker %d gave window %d where window %d was due", i, w, windows)
			}
			sum.add(&pw.outs[slot])
			pw.free <- slot
		}
		switch ends {
		case 0:
			return false, nil
		case len(ws):
			return true, nil
		}
		return false, fmt.Errorf("mpc: %d of %d partition workers ended their partitions after window %d, the others did not", ends, len(ws), windows-1)
	}
	// With a shared reader the caller reads each segment when the workers
	// have walked the last (segEnd: the window after it) and gives it to
	// them, then the finish after the last; forked readers' workers read
	// the segments themselves.
	segEnd := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, true, err
		}
		if windows%1024 == 0 {
			if err := room.check(windows + 1024); err != nil {
				return nil, true, err
			}
		}
		if forks == nil && windows == segEnd {
			first, n, err := pr.NextSegment()
			switch {
			case errors.Is(err, io.EOF):
				for _, pw := range ws {
					pw.jobs <- partJob{finish: true}
				}
			case err != nil:
				return nil, true, err
			default:
				for _, pw := range ws {
					pw.jobs <- partJob{first: first, n: n}
				}
				segEnd = first + n
			}
		}
		end, err := merge()
		if err != nil {
			return nil, true, err
		}
		if end {
			break
		}
		st.feedWindow(windows, &sum)
		windows++
		if opts.Progress != nil {
			opts.Progress(windows, h.Windows)
		}
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
	own   bool // pr is the worker's own: it reads the segments itself
	parts []int
	hws   []*trace.HistWalker // by position in parts
	hist  *trace.GapHistogram // shared by hws: they walk one after the other
	win   trace.Window
	// On its own goroutine: its jobs (unless own), and its outputs, free
	// to fill (free) or filled (done), in order: a window (wins: its
	// index) or the finish (-1).
	jobs       chan partJob
	free, done chan int
	outs       [partSlots]PartialWindow
	wins       [partSlots]int
	errs       [partSlots]error // the output's error: the worker's first, which stops it
	err        error            // the first error
}

// partSlots is the number of a worker's outputs: with a reader of its own,
// a worker runs up to partSlots windows ahead of the slowest worker and the
// merge.
const partSlots = 8

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

// start runs the worker on a goroutine of its own, until quit is closed;
// wg counts the goroutine. With a reader of its own the worker reads and
// walks every segment, then finishes; else it walks the segments of its
// jobs.
func (pw *partWorker) start(quit <-chan struct{}, wg *sync.WaitGroup) {
	pw.jobs = make(chan partJob)
	pw.free, pw.done = make(chan int, len(pw.outs)), make(chan int, len(pw.outs))
	for i := range pw.outs {
		pw.free <- i
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// one fills an output with window w (-1: the finish): false if
		// quit is closed, or after an error.
		one := func(w int, f func(o *PartialWindow)) bool {
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
			pw.wins[slot], pw.errs[slot] = w, pw.err
			pw.done <- slot // room for it: done holds every output
			return pw.err == nil
		}
		if pw.own {
			for {
				first, n, err := pw.pr.NextSegment()
				if errors.Is(err, io.EOF) {
					one(-1, pw.finish)
					return
				}
				if err != nil {
					pw.err = err
					one(-1, func(o *PartialWindow) { o.reset() })
					return
				}
				for w := first; w < first+n; w++ {
					if !one(w, func(o *PartialWindow) { pw.window(w, o) }) {
						return
					}
				}
			}
		}
		for {
			var j partJob
			select {
			case j = <-pw.jobs:
			case <-quit:
				return
			}
			if j.finish {
				one(-1, pw.finish)
				continue
			}
			for w := j.first; w < j.first+j.n; w++ {
				if !one(w, func(o *PartialWindow) { pw.window(w, o) }) {
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
