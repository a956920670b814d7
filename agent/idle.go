package agent

import (
	"context"
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
	if !sleepUntil(ctx, t.start.Add(time.Duration(k+1)*t.window)) {
		return nil, ctx.Err()
	}
	win, alive, err := t.rec.Scan(k + 1)
	if err != nil {
		return nil, err
	}
	t.pages = append(t.pages, win.New...)
	t.done = !alive
	return win, nil
}

// Close releases the idle bitmap.
func (t *Idle) Close() error { return t.rec.Close() }
