package mpc

import (
	"context"
	"errors"
	"io"
	"runtime"
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
// Each of up to GOMAXPROCS workers owns the partitions p with p mod
// workers equal to its number, one trace.HistWalker each (no helpers)
// counting into the worker's one histogram; window by window, the workers
// decode and walk their partitions' window (decompressing a segment's
// payload when they reach it) while the caller waits, and the caller then
// drains their histograms into the engines' pipeline. done is false when
// the engines need more than histograms (a gap-by-gap engine such as
// lopp's, or lru's, which reads whole windows): Generate then reads the trace merged.
func generatePartitioned(ctx context.Context, pr trace.PartitionedReader, settings []policy.Setting, opts Options, room room) (out []*result.Result, done bool, err error) {
	st, classes, _, err := newEngines(settings)
	if err != nil {
		return nil, true, err
	}
	for _, e := range st.engines {
		if _, lru := e.(*lruEngine); lru || e.needsGaps() {
			st.stop()
			return nil, false, nil
		}
	}
	defer st.stop()
	st.reserve(pr.Header().Windows, room)
	P := pr.Selected()
	nw := max(1, min(runtime.GOMAXPROCS(0), P))
	ws := make([]*partWorker, nw)
	for i := range ws {
		ws[i] = newPartWorker(pr, classes, i, nw, P)
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
			st.p.mark(markNew, w, 0)
			run(func(pw *partWorker) { pw.window(w) })
			var accessed, alive int64
			for _, pw := range ws {
				if pw.err != nil {
					return nil, true, pw.err
				}
				accessed += pw.accessed
				alive += pw.alive
			}
			st.t.accessed = append(st.t.accessed, accessed)
			st.t.alive = append(st.t.alive, alive)
			for _, pw := range ws {
				st.es = pw.hist.Drain(true, st.es[:0])
				st.p.group(w, true, st.es)
				st.es = pw.hist.Drain(false, st.es[:0])
				st.p.group(w+1, false, st.es)
			}
			st.p.mark(markEnd, w, accessed)
			windows = w + 1
			if opts.Progress != nil {
				opts.Progress(windows, h.Windows)
			}
		}
	}
	run(func(pw *partWorker) { pw.finish() })
	for _, pw := range ws {
		st.es = pw.hist.Drain(false, st.es[:0])
		st.p.group(windows, false, st.es)
		st.t.L += pw.alivePageWins
	}
	st.stop()
	return st.results(settings, int64(h.PageSize), 1), true, nil
}

// partWorker walks some partitions of a trace, on its own goroutine.
type partWorker struct {
	pr    trace.PartitionedReader
	parts []int
	hws   []*trace.HistWalker // by position in parts
	hist  *trace.GapHistogram // shared by hws: they walk one after the other
	win   trace.Window
	jobs  chan func()
	// The last window's sums over the worker's partitions, and the error.
	accessed, alive int64
	alivePageWins   int64
	err             error
}

func newPartWorker(pr trace.PartitionedReader, classes classAxis, i, n, P int) *partWorker {
	pw := &partWorker{pr: pr, jobs: make(chan func())}
	pw.hist = trace.NewGapHistogram(len(classes.vals)+1, classes.class)
	for p := i; p < P; p += n {
		pw.parts = append(pw.parts, p)
		pw.hws = append(pw.hws, trace.NewHistWalker([]*trace.GapHistogram{pw.hist}))
	}
	go func() {
		for f := range pw.jobs {
			f()
		}
	}()
	return pw
}

// window decodes and walks window w of each of the worker's partitions.
func (pw *partWorker) window(w int) {
	pw.accessed, pw.alive = 0, 0
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
		pw.accessed += int64(len(pw.win.Accessed))
		pw.alive += hw.Counts.AlivePageWins - before
	}
}

// finish ends the lives still alive in the worker's partitions.
func (pw *partWorker) finish() {
	pw.alivePageWins = 0
	for _, hw := range pw.hws {
		hw.Finish()
		pw.alivePageWins += hw.Counts.AlivePageWins
	}
}

func (pw *partWorker) close() {
	close(pw.jobs)
	for _, hw := range pw.hws {
		hw.Close()
	}
}
