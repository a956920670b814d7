package collect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"mdk/linux"
	"mdk/trace"
)

// Run records until opt.Duration has passed, every target has exited (a
// cgroup: its directory was removed), or ctx ends. It calls newWriter once,
// after the first scan, with the trace header (Source names the space of
// each pid), then writes and flushes every completed window. A window cut
// short by ctx is dropped. The returned summary also holds the reason for
// stopping. Ending by ctx is not an error.
func (r *Recorder) Run(ctx context.Context, newWriter func(trace.Header) (trace.Writer, error)) (Summary, error) {
	opt := r.opt
	start := time.Now()
	maxWindows := -1
	if opt.Duration > 0 {
		maxWindows = int(opt.Duration / opt.Window)
		if maxWindows < 1 {
			return r.sum, fmt.Errorf("duration %v is shorter than one window (%v)", opt.Duration, opt.Window)
		}
	}
	var w trace.Writer
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	if r.damon != nil {
		// Scan 0 right after an aggregation boundary, so that each
		// window is one aggregation interval.
		if err := r.damon.capture(ctx); err != nil {
			if ctx.Err() != nil {
				r.sum.Reason = "interrupted"
				return r.sum, nil
			}
			return r.sum, err
		}
	}
	for k := 0; ; k++ {
		if k > 0 && r.damon != nil {
			if err := r.damon.capture(ctx); errors.Is(err, linux.ErrKdamondStopped) {
				// The kdamond ends by itself when its target exits: the
				// scan below finds the process gone and ends the
				// recording; if the process still runs, someone else
				// stopped the kdamond.
				if alive, serr := r.scan(k); serr != nil || alive {
					if w != nil {
						w.Close()
					}
					if serr == nil {
						serr = fmt.Errorf("%w while pid %d still runs (turned off by someone else?)", err, r.opt.PIDs[0])
					}
					return r.sum, serr
				}
				if err := w.WriteWindow(&r.win); err != nil {
					return r.sum, fmt.Errorf("write window %d: %w", r.win.Index, err)
				}
				r.sum.Windows = k
				r.sum.Reason = "the targets exited"
				return r.sum, r.closeWriter(w)
			} else if err != nil {
				if ctx.Err() != nil {
					r.sum.Reason = "interrupted"
					return r.sum, r.closeWriter(w)
				}
				if w != nil {
					w.Close()
				}
				return r.sum, err
			}
		} else if k > 0 {
			next := start.Add(time.Duration(k) * opt.Window)
			if d := time.Until(next); d > 0 {
				timer.Reset(d)
				select {
				case <-ctx.Done():
					r.sum.Reason = "interrupted"
					return r.sum, r.closeWriter(w)
				case <-timer.C:
				}
			} else {
				r.sum.Overrun++
			}
		}
		alive, err := r.scan(k)
		if err != nil {
			if w != nil {
				w.Close()
			}
			return r.sum, err
		}
		if k == 0 {
			if w, err = newWriter(r.header()); err != nil {
				return r.sum, err
			}
		} else {
			if err := w.WriteWindow(&r.win); err != nil {
				return r.sum, fmt.Errorf("write window %d: %w", r.win.Index, err)
			}
			if f, ok := w.(interface{ Flush() error }); ok {
				if err := f.Flush(); err != nil {
					return r.sum, fmt.Errorf("flush window %d: %w", r.win.Index, err)
				}
			}
			r.sum.Windows = k
		}
		if opt.AfterScan != nil {
			opt.AfterScan(k)
		}
		switch {
		case !alive:
			r.sum.Reason = "the targets exited"
		case maxWindows >= 0 && k >= maxWindows:
			r.sum.Reason = "duration reached"
		case ctx.Err() != nil:
			r.sum.Reason = "interrupted"
		default:
			continue
		}
		return r.sum, r.closeWriter(w)
	}
}

func (r *Recorder) closeWriter(w trace.Writer) error {
	if w == nil {
		return nil
	}
	return w.Close()
}

// header is the trace header, written after scan 0.
func (r *Recorder) header() trace.Header {
	var b strings.Builder
	if r.damon != nil {
		fmt.Fprintf(&b, "mdk record: Linux DAMON (vaddr; a region accessed in a window makes all its existing pages accessed), window = aggregation interval %v, sampling %v; ", r.opt.Window, r.damon.sample)
	} else {
		fmt.Fprintf(&b, "mdk record: Linux idle page tracking, window %v; ", r.opt.Window)
	}
	if r.phys != nil {
		b.WriteString("pages = page frames, each counted once (space 0: page frame number; space 1: swap entry of a swapped-out page); ")
	}
	if r.opt.Cgroup != "" {
		fmt.Fprintf(&b, "cgroup %s; ", r.opt.Cgroup)
	}
	b.WriteString("space = pid index in order first seen:")
	for i, s := range r.spaces {
		fmt.Fprintf(&b, " %d=%d", i, s.pid)
	}
	if r.phys != nil {
		b.WriteString(" (not the trace's spaces)")
	}
	if r.opt.Cgroup != "" {
		b.WriteString(" (later pids in the log)")
	}
	if r.mglru {
		b.WriteString("; WARNING: MGLRU was enabled, idleness over-reported")
	}
	if !r.opt.Sample.All() {
		fmt.Fprintf(&b, "; sampled: %s of the pages", r.opt.Sample)
	}
	return trace.Header{PageSize: linux.PageSize(), Window: r.opt.Window, Source: b.String(), Sample: r.opt.Sample}
}
