package agent

import (
	"context"
	"fmt"
	"io"
	"time"

	"mdk/collect"
	"mdk/trace"
)

// Idle is the live tracker: idle page tracking ([collect.Recorder], the
// scanner of mdk record) on running processes. Window k's accesses are
// known at scan k+1, at the end of the window; the tracker keeps that
// clock, one scan per window.
type Idle struct {
	rec    *collect.Recorder
	pids   []int
	window time.Duration
	start  time.Time
	pages  []trace.Page
	hdr    trace.Header
	done   bool
	damon  bool // DAMON's clock: each scan follows a capture at the end of an aggregation interval
}

// NewIdle checks the kernel and the targets and performs scan 0 now.
func NewIdle(fsys collect.FS, pids []int, window time.Duration) (*Idle, error) {
	rec, err := collect.NewRecorder(collect.Options{FS: fsys, PIDs: pids, Window: window})
	if err != nil {
		return nil, err
	}
	t := &Idle{rec: rec, pids: pids, window: window, start: time.Now(),
		hdr: trace.Header{PageSize: 4096, Window: window, Source: "mdk agent: Linux idle page tracking"}}
	if _, _, err := rec.Scan(0); err != nil {
		rec.Close()
		return nil, err
	}
	return t, nil
}

// NewDamon is the DAMON tracker (the recorder's --tracker damon: vaddr
// operations on one process, a region accessed in a window makes all its
// existing pages accessed) on the running process pid, with aggregation
// interval = window. It takes a kdamond only when one is free (none exists,
// or one is off and unconfigured) and otherwise refuses with
// [collect.ErrNoDamon], having written nothing: it never takes over a
// kdamond it did not start. DAMON keeps the window clock: each window ends
// at the end of an aggregation interval. Scan 0 is performed now, right
// after one.
func NewDamon(ctx context.Context, fsys collect.FS, pid int, window time.Duration) (*Idle, error) {
	rec, err := collect.NewRecorder(collect.Options{FS: fsys, PIDs: []int{pid}, Window: window, Tracker: collect.TrackerDamon})
	if err != nil {
		return nil, err
	}
	t := &Idle{rec: rec, pids: []int{pid}, window: window, damon: true,
		hdr: trace.Header{PageSize: 4096, Window: window, Source: "mdk agent: Linux DAMON (vaddr, region-level)"}}
	stopped, err := rec.Capture(ctx)
	if err == nil && stopped {
		err = fmt.Errorf("%w: DAMON's kdamond stopped before the first window (pid %d exited?)", collect.ErrNoProcess, pid)
	}
	if err == nil {
		_, _, err = rec.Scan(0)
	}
	if err != nil {
		rec.Close()
		return nil, err
	}
	t.start = time.Now()
	return t, nil
}

// TrackerName names the tracker in run.json.
func (t *Idle) TrackerName() string {
	if t.damon {
		return "damon"
	}
	return "live"
}

// Header describes the observed trace.
func (t *Idle) Header() trace.Header { return t.hdr }

// Targets returns the pids, in space order.
func (t *Idle) Targets() []int { return t.pids }

// Future returns nil: a live tracker does not know the future.
func (t *Idle) Future() *trace.Trace { return nil }

// Page returns the space and virtual page of page id.
func (t *Idle) Page(id uint32) (int, uint64) {
	p := t.pages[id]
	return int(p.Space), p.Page
}

// Next waits for the end of window k, scans, and returns window k.
func (t *Idle) Next(ctx context.Context, k int) (*trace.Window, error) {
	if t.done {
		return nil, io.EOF
	}
	stopped := false
	if t.damon {
		var err error
		if stopped, err = t.rec.Capture(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	} else if !sleepUntil(ctx, t.start.Add(time.Duration(k+1)*t.window)) {
		return nil, ctx.Err()
	}
	win, alive, err := t.rec.Scan(k + 1)
	if err != nil {
		return nil, err
	}
	if stopped && alive {
		// The kdamond stops by itself when its target exits: this scan
		// found the process gone and ends the run; if it still runs,
		// someone else stopped the kdamond.
		return nil, fmt.Errorf("DAMON's kdamond stopped while pid %d still runs (turned off by someone else?)", t.pids[0])
	}
	t.pages = append(t.pages, win.New...)
	t.done = !alive
	return win, nil
}

// Close releases the idle bitmap, or stops the kdamond the tracker started
// and leaves DAMON's sysfs as it was found.
func (t *Idle) Close() error { return t.rec.Close() }
