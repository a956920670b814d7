package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"mdk/linux"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// Options configures one run. Start from [DefaultOptions].
type Options struct {
	Setting policy.Setting
	// Controller, if set, decides instead of Setting: it may change the
	// setting from window to window (an online tuner). Setting still names
	// the run's setting in run.json.
	Controller Controller
	Window     time.Duration // window length: the agent wakes once per window
	Windows    int           // stop after this many windows; 0: until the tracker ends

	DryRun bool // decide and measure, reclaim nothing
	// MaxPages is the most pages reclaimed in one window (0: none); the
	// decided pages past it (in page order) are not reclaimed, cause
	// "limit".
	MaxPages int
	// PSIThreshold: when the "some avg10" of PSIPath is above this many
	// percent, the window reclaims nothing (cause "psi"). 0 disables.
	PSIThreshold float64
	PSIPath      string // memory pressure file; "" is <proc>/pressure/memory
	// SLO is a promotion-rate objective (a fraction of the window's accessed
	// pages). After SLOWindows consecutive windows whose measured promotion
	// rate is above it, the agent reclaims nothing (cause "slo") until a
	// window is back under it. 0 disables.
	SLO        float64
	SLOWindows int
	// SwapFloorBytes of swap stay free: a window reclaims at most
	// (free swap - floor) / page size pages (the rest: cause "swap").
	SwapFloorBytes int64
	// Cgroup is the targets' memory cgroup directory, whose memory.stat
	// gives workingset_refault_anon; "" for none.
	Cgroup string
	// Model is the L-OPP model file of a lopp setting, recorded in run.json.
	Model string

	FS      linux.FS
	Dir     string    // the run directory; created if missing (its parent must exist)
	Force   bool      // replace the run in Dir if it holds one (else an error)
	Log     io.Writer // JSON line of every window; nil for none
	Metrics *Metrics  // Prometheus metrics to update; nil for none
}

// DefaultMaxPages is the default per-window limit: 262,144 pages, 1 GiB of
// 4 KiB pages.
const DefaultMaxPages = 262_144

// DefaultOptions holds the default safety limits.
var DefaultOptions = Options{
	Window:         30 * time.Second,
	MaxPages:       DefaultMaxPages,
	PSIThreshold:   10,
	SLOWindows:     3,
	SwapFloorBytes: 64 << 20,
	FS:             linux.Default(),
}

// Summary is a run's totals.
//
// In run.json its keys are snake_case (windows, decided, out, refused,
// skipped, promotions, saved, kernel_out, cpu_ns); older CamelCase files
// are read too (rundir.go).
type Summary struct {
	Windows    int
	Decided    int64
	Out        int64
	Refused    int64
	Skipped    int64 // pages decided and not reclaimed, refused ones included
	Promotions int64
	Saved      int64
	KernelOut  int64
	CPU        time.Duration
}

// agent is one run's state: the model of the observed trace's pages
// (model.go), the targets, and what the stages keep between windows.
type agent struct {
	opt  Options
	tr   Tracker
	ctl  Controller
	gaps [][]sim.Gap // oracle, when the tracker knows the future
	model
	tgts   []target
	flags  *linux.PageFlags
	sloBad int   // consecutive windows above the SLO (guards.go)
	peak   int64 // the largest alive page count of a window so far (a capacity's, decide.go)
	// absentAlive: the window's alive pages the model has absent (the
	// simulator's saved page-windows, measure.go).
	absentAlive int64

	entries      []uint64 // pagemap entry of every page, this window (measure.go)
	buf          []uint64
	pagemapReads int // pagemap reads the agent made itself, over the run

	prev counters
	sum  Summary
}

// Run runs the agent until the tracker ends, opt.Windows windows are done,
// or ctx is canceled (SIGINT/SIGTERM): every completed window is written.
// It closes the tracker.
func Run(ctx context.Context, tr Tracker, opt Options) (sum Summary, err error) {
	defer func() {
		if cerr := tr.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close tracker: %w", cerr)
		}
	}()
	if opt.Setting == nil {
		return sum, errors.New("agent: no policy setting")
	}
	if opt.Window <= 0 {
		return sum, fmt.Errorf("agent: window must be positive, got %v", opt.Window)
	}
	if opt.MaxPages < 0 {
		return sum, fmt.Errorf("agent: MaxPages %d is negative", opt.MaxPages)
	}
	if opt.FS.Proc == "" {
		opt.FS = linux.Default()
	}
	a := &agent{opt: opt, tr: tr}
	fut := tr.Future()
	if policy.IsOffline(opt.Setting) && fut == nil {
		return sum, fmt.Errorf("agent: %s needs the future: it runs only with the replay tracker", opt.Setting.Policy())
	}
	if a.ctl = opt.Controller; a.ctl == nil {
		a.ctl = FixedSetting(opt.Setting, fut)
	}
	if c, ok := a.ctl.(*Controlled); ok {
		c.start(tr.Header())
	}
	if fut != nil {
		a.gaps = sim.TraceGaps(fut)
	}
	if !opt.DryRun {
		if err := CheckSwap(opt.FS); err != nil {
			return sum, err
		}
	}
	for i, pid := range tr.Targets() {
		t, err := openTarget(opt.FS, pid, opt.DryRun)
		if err != nil {
			return sum, fmt.Errorf("target %d (pid %d): %w", i, pid, err)
		}
		defer t.close()
		a.tgts = append(a.tgts, t)
	}
	if f, err := opt.FS.OpenPageFlags(); err == nil {
		a.flags = f
		defer f.Close()
	}
	out, err := newRunFiles(opt, trackerName(tr), tr.Header(), tr.Targets())
	if err != nil {
		return sum, err
	}
	defer func() {
		if cerr := out.finish(a.sum); err == nil {
			err = cerr
		}
	}()
	a.prev = a.counters()

	clock := newClock(tr, opt.Window)
	for k := 0; opt.Windows == 0 || k < opt.Windows; k++ {
		if err := clock.Wait(ctx, k); err != nil {
			if ctx.Err() != nil {
				break
			}
			return a.sum, fmt.Errorf("window %d: %w", k, err)
		}
		win, err := tr.Next(ctx, k)
		if errors.Is(err, io.EOF) || ctx.Err() != nil {
			break
		}
		if err != nil {
			return a.sum, fmt.Errorf("window %d: %w", k, err)
		}
		row, skipped, err := a.window(k, win)
		if err != nil {
			return a.sum, fmt.Errorf("window %d: %w", k, err)
		}
		if err := a.record(out, win, &row, skipped); err != nil {
			return a.sum, err
		}
		if !slices.ContainsFunc(a.tgts, func(t target) bool { return !t.gone }) {
			break // every target exited
		}
	}
	return a.sum, nil
}

// window runs the stages of window k, whose events win has just happened:
//
//  1. track: the window's touches update the model (SPEC section 1, the
//     rules of sim.Life: accesses, then births of pages not alive);
//  2. measure: one pagemap read of every target (the tracker's own, when it
//     made one): a page the agent put out and found present is a
//     promotion, one still out a saved page-window; an alive page out that
//     the agent did not put out was reclaimed by the kernel;
//  3. decide: the Controller's Decider sees every alive page the agent has
//     not put out, in dense-ID order, as the simulator does;
//  4. guards: dry run, SLO, PSI, page limit and swap floor, in this order,
//     each keeping the decided pages past its allowance (skipped);
//  5. actuate: the rest go to process_madvise(MADV_PAGEOUT), per target;
//  6. confirm: pagemap is re-read for them: out, or refused with the
//     reason;
//  7. the window's frees end lives; record writes the row (record.go).
func (a *agent) window(k int, win *trace.Window) (Row, []skip, error) {
	cpu0 := linux.CPUTime()
	t0 := time.Now()
	row := Row{Window: int64(k), Accessed: int64(len(win.Accessed))}

	a.track(k, win, a.tr.Page)
	back, err := a.measure(&row)
	if err != nil {
		return row, nil, err
	}
	a.sloCheck(&row)
	decided, err := a.decide(k, win, &row)
	if err != nil {
		return row, nil, err
	}
	decided, skipped := a.guard(&row, decided)
	sk, err := a.actuate(&row, decided)
	if err != nil {
		return row, nil, err
	}
	skipped = append(skipped, sk...)
	skipped = append(skipped, back...)
	a.free(win)

	a.crossCheck(&row)
	if rep, ok := a.tr.(WorkloadReporter); ok {
		if w := rep.Workload(); w != nil {
			row.Touches, row.TouchesPerSec = int64(w.Accessed), w.TouchesPerSec
			row.TouchP50NS, row.TouchP99NS, row.TouchMaxNS = w.P50NS, w.P99NS, w.MaxNS
			row.SlowTouches, row.SlowNS = int64(w.SlowTouches), w.SlowNS
		}
	}
	row.CPUNS = int64(linux.CPUTime() - cpu0)
	row.WallNS = int64(time.Since(t0))
	a.sum.Windows++
	a.sum.Decided += row.Decided
	a.sum.Out += row.Out
	a.sum.Refused += row.Refused
	a.sum.Skipped += int64(len(skipped) - len(back))
	a.sum.Promotions += row.Promotions
	a.sum.Saved += row.Saved
	a.sum.KernelOut += row.KernelOut
	a.sum.CPU += time.Duration(row.CPUNS)
	return row, skipped, nil
}

// skip is a page decided but not reclaimed, with the cause.
type skip struct {
	page  uint32
	cause string
}

// Skip causes, as written in skipped.csv.
const (
	CauseDry   = "dry"
	CauseSLO   = "slo"
	CausePSI   = "psi"
	CauseLimit = "limit"
	CauseSwap  = "swap"
	CauseGone  = "gone"
	// CauseBack: a page the agent put out was found present again without
	// an access (a swapoff, swap readahead); its line has the window before
	// the one it was found in, and counts as not reclaimed from then on.
	CauseBack = "swapped_in"
)

// CheckSwap returns linux.ErrNoSwap when no swap device is active: the
// agent then refuses to run (except a dry run).
func CheckSwap(fsys linux.FS) error { return fsys.CheckSwap() }
