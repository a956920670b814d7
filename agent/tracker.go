package agent

import (
	"context"
	"time"

	"mdk/trace"
	"mdk/workload"
)

// Tracker is the agent's access signal (the track stage): it says which
// pages were accessed in each window, and where each page of the observed
// trace lives.
type Tracker interface {
	// Header describes the observed trace (its page size and window).
	Header() trace.Header
	// Targets returns the pids of the processes whose pages are tracked.
	Targets() []int
	// Next returns window k's events, once they have happened: for a
	// replay, after the workload touched window k's pages; for a scanner,
	// after the scan at the window's end. The agent's clock has waited for
	// the window already: Next does not wait for time itself. It returns
	// io.EOF when there is no window k (the trace ended, every target
	// exited).
	Next(ctx context.Context, k int) (*trace.Window, error)
	// Page returns where page id of the observed trace lives: the index of
	// its target in Targets and its virtual page number.
	Page(id uint32) (target int, vpn uint64)
	// Future returns the whole trace when the tracker knows it in advance
	// (a replay), so that offline policies (vmin, opp) can run; else nil.
	Future() *trace.Trace
	Close() error
}

// WorkloadReporter is implemented by trackers whose workload reports what it
// felt in the window just returned by Next.
type WorkloadReporter interface {
	Workload() *workload.Window
}

// Snapshot is implemented by trackers that read every target's pagemap
// for their own work (the live scanners): the measure stage takes the
// entries of that read instead of reading pagemap again, so that a window
// reads pagemap once for tracking and measuring together.
type Snapshot interface {
	// Pagemap fills entries[id] with the pagemap entry the tracker read for
	// page id of the observed trace in the window just returned by Next (0
	// for a page neither present nor swapped) and gone[t] with whether
	// target t had exited by then. entries has one slot per page announced
	// so far.
	Pagemap(entries []uint64, gone []bool)
}

// Clock is what a window waits for before its events are taken: the
// agent's timer, or a tracker's own when the kernel sets the window's end
// (DAMON's aggregation interval). A run has exactly one.
type Clock interface {
	// Wait returns when window k's events may be taken, or ctx's error.
	Wait(ctx context.Context, k int) error
}

// EndClocked is implemented by trackers whose window k is observed at its
// end (a scanner: the scan at the end of window k tells its accesses), as
// opposed to a replay, which makes window k's accesses at its start.
type EndClocked interface {
	// Started returns the start of window 0 (the time of scan 0).
	Started() time.Time
}

// timer is the agent's clock: window k's events are taken at
// start + (k+lag) * window.
type timer struct {
	start  time.Time
	window time.Duration
	lag    int
}

func (c timer) Wait(ctx context.Context, k int) error {
	d := time.Until(c.start.Add(time.Duration(k+c.lag) * c.window))
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// newClock returns the run's one clock: the tracker's own if it has one,
// else the agent's timer, started at scan 0 for a scanner (window k ends
// one window after it starts) and now for a replay.
func newClock(tr Tracker, window time.Duration) Clock {
	if c, ok := tr.(Clock); ok {
		return c
	}
	if e, ok := tr.(EndClocked); ok {
		return timer{start: e.Started(), window: window, lag: 1}
	}
	return timer{start: time.Now(), window: window}
}

// trackerName names the tracker in run.json.
func trackerName(tr Tracker) string {
	if n, ok := tr.(interface{ TrackerName() string }); ok {
		return n.TrackerName()
	}
	if tr.Future() != nil {
		return "replay"
	}
	return "live"
}
