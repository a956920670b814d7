package agent

import (
	"context"
	"fmt"
	"io"
	"time"

	"mdk/collect"
	"mdk/linux"
	"mdk/trace"
)

// scanner is a live tracker on running processes: the recorder of mdk
// record ([collect.Recorder]), one scan per window. Window k's accesses are
// known at scan k+1, at the end of the window. Its pagemap read is the
// agent's measurement too ([Snapshot]).
type scanner struct {
	rec   *collect.Recorder
	pids  []int
	pages []trace.Page
	hdr   trace.Header
	done  bool
}

// Header describes the observed trace.
func (t *scanner) Header() trace.Header { return t.hdr }

// Targets returns the pids, in space order.
func (t *scanner) Targets() []int { return t.pids }

// Future returns nil: a live tracker does not know the future.
func (t *scanner) Future() *trace.Trace { return nil }

// Page returns the space and virtual page of page id.
func (t *scanner) Page(id uint32) (int, uint64) {
	p := t.pages[id]
	return int(p.Space), p.Page
}

// Pagemap gives the agent the entries of the window's scan.
func (t *scanner) Pagemap(entries []uint64, gone []bool) { t.rec.Pagemap(entries, gone) }

// scan performs scan k+1 and returns window k.
func (t *scanner) scan(k int) (*trace.Window, bool, error) {
	win, alive, err := t.rec.Scan(k + 1)
	if err != nil {
		return nil, alive, err
	}
	t.pages = append(t.pages, win.New...)
	t.done = !alive
	return win, alive, nil
}

// Close releases the idle bitmap, or stops the kdamond the tracker started
// and leaves DAMON's sysfs as it was found.
func (t *scanner) Close() error { return t.rec.Close() }

// Idle is the live tracker with idle page tracking. It keeps no clock: the
// agent's timer ends window k one window after scan k ([EndClocked]).
type Idle struct {
	scanner
	start time.Time
}

// NewIdle checks the kernel and the targets and performs scan 0 now.
func NewIdle(fsys linux.FS, pids []int, window time.Duration) (*Idle, error) {
	rec, err := collect.NewRecorder(collect.Options{FS: fsys, PIDs: pids, Window: window})
	if err != nil {
		return nil, err
	}
	t := &Idle{scanner: scanner{rec: rec, pids: pids,
		hdr: trace.Header{PageSize: linux.PageSize(), Window: window, Source: "mdk agent: Linux idle page tracking"}}, start: time.Now()}
	if _, _, err := rec.Scan(0); err != nil {
		rec.Close()
		return nil, err
	}
	return t, nil
}

// TrackerName names the tracker in run.json.
func (t *Idle) TrackerName() string { return "live" }

// Started returns the time of scan 0, the start of window 0.
func (t *Idle) Started() time.Time { return t.start }

// Next scans and returns window k; the agent's clock has waited for its
// end.
func (t *Idle) Next(ctx context.Context, k int) (*trace.Window, error) {
	if t.done {
		return nil, io.EOF
	}
	win, _, err := t.scan(k)
	return win, err
}

// Damon is the DAMON tracker (the recorder's --tracker damon: vaddr
// operations on one process; a region accessed in a window makes all its
// existing pages accessed). Its windows end where DAMON's aggregation
// intervals end, so it is the run's clock ([Clock]): the kernel snapshots a
// window's regions only at an aggregation boundary.
type Damon struct {
	scanner
	stopped bool // the last capture found the kdamond off
}

// NewDamon is the DAMON tracker on the running process pid, with
// aggregation interval = window. It takes a kdamond only when one is free
// (none exists, or one is off and unconfigured) and otherwise refuses with
// [linux.ErrNoDamon], having written nothing: it never takes over a
// kdamond it did not start. Scan 0 is performed now, right after an
// aggregation boundary.
func NewDamon(ctx context.Context, fsys linux.FS, pid int, window time.Duration) (*Damon, error) {
	rec, err := collect.NewRecorder(collect.Options{FS: fsys, PIDs: []int{pid}, Window: window, Tracker: collect.TrackerDamon})
	if err != nil {
		return nil, err
	}
	t := &Damon{scanner: scanner{rec: rec, pids: []int{pid},
		hdr: trace.Header{PageSize: linux.PageSize(), Window: window, Source: "mdk agent: Linux DAMON (vaddr, region-level)"}}}
	stopped, err := rec.Capture(ctx)
	if err == nil && stopped {
		err = fmt.Errorf("%w: DAMON's kdamond stopped before the first window (pid %d exited?)", linux.ErrNoProcess, pid)
	}
	if err == nil {
		_, _, err = rec.Scan(0)
	}
	if err != nil {
		rec.Close()
		return nil, err
	}
	return t, nil
}

// TrackerName names the tracker in run.json.
func (t *Damon) TrackerName() string { return "damon" }

// Wait waits for the end of DAMON's current aggregation interval (window
// k's end) and takes the regions DAMON saw in it.
func (t *Damon) Wait(ctx context.Context, k int) error {
	if t.done {
		return nil
	}
	var err error
	t.stopped, err = t.rec.Capture(ctx)
	return err
}

// Next scans and returns window k, whose regions Wait took.
func (t *Damon) Next(ctx context.Context, k int) (*trace.Window, error) {
	if t.done {
		return nil, io.EOF
	}
	win, alive, err := t.scan(k)
	if err != nil {
		return nil, err
	}
	if t.stopped && alive {
		// The kdamond stops by itself when its target exits: this scan
		// found the process gone and ends the run; if it still runs,
		// someone else stopped the kdamond.
		return nil, fmt.Errorf("DAMON's kdamond stopped while pid %d still runs (turned off by someone else?)", t.pids[0])
	}
	return win, nil
}
