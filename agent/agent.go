package agent

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"mdk/collect"
	"mdk/internal/outfile"
	"mdk/policy"
	"mdk/trace"
	"mdk/workload"
)

// Tracker is the agent's access signal: it says which pages were accessed in
// each window, and where each page of the observed trace lives.
type Tracker interface {
	// Header describes the observed trace (its page size and window).
	Header() trace.Header
	// Targets returns the pids of the processes whose pages are tracked.
	Targets() []int
	// Next returns window k's events, once they have happened: for a
	// replay, after the workload touched window k's pages; for a scanner,
	// after the scan at the window's end. It returns io.EOF when there is
	// no window k (the trace ended, every target exited).
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

// Options configures one run. Start from [DefaultOptions].
type Options struct {
	Setting policy.Setting
	Window  time.Duration // window length: the agent wakes once per window
	Windows int           // stop after this many windows; 0: until the tracker ends

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

	FS      collect.FS
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
	FS:             collect.NewFS("/proc", "/sys"),
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

// page is the agent's state of one page of the observed trace: the model's
// view (life, last touch, prior reuse distance, features) and what pagemap
// says of it.
type page struct {
	alive    bool
	out      bool // the agent put it out and pagemap confirmed it
	kout     bool // out, not by the agent (kernel reclaim)
	accessed bool // accessed in the current window
	last     int
	prior    int
	features policy.Features
	next     int // index in the oracle's gaps of the gap starting at last
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

type agent struct {
	opt   Options
	tr    Tracker
	dec   policy.Decider
	pages []page
	gaps  [][]gap // oracle, when the tracker knows the future
	vpn   []uint64
	tgt   []int32
	// order lists, per target, the pages in virtual page order.
	order [][]uint32
	acts  []*collect.Actuator
	gone  []bool
	flags *collect.PageFlags
	proc  procfs.FS

	entries []uint64 // pagemap entry of every page, this window
	buf     []uint64
	sloBad  int

	prev counters
	sum  Summary
}

// counters are the kernel counters whose increase a row reports.
type counters struct{ majflt, pswpin, pswpout, refault int64 }

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
		opt.FS = collect.NewFS("/proc", "/sys")
	}
	a := &agent{opt: opt, tr: tr}
	fut := tr.Future()
	switch opt.Setting.Policy() {
	case "vmin", "opp":
		if fut == nil {
			return sum, fmt.Errorf("agent: %s needs the future: it runs only with the replay tracker", opt.Setting.Policy())
		}
	}
	var accessed []int64
	if fut != nil {
		accessed = make([]int64, len(fut.Windows))
		for w := range fut.Windows {
			accessed[w] = int64(len(fut.Windows[w].Accessed))
		}
		a.gaps = oracle(fut)
	}
	a.dec = opt.Setting.NewDecider(accessed)
	a.proc, err = procfs.NewFS(opt.FS.Proc)
	if err != nil {
		return sum, err
	}
	if !opt.DryRun {
		if err := CheckSwap(opt.FS); err != nil {
			return sum, err
		}
	}
	for i, pid := range tr.Targets() {
		open := opt.FS.OpenActuator
		if opt.DryRun { // a dry run never reclaims: no right to reclaim needed
			open = opt.FS.OpenObserver
		}
		act, err := open(pid)
		if err != nil {
			return sum, fmt.Errorf("target %d (pid %d): %w", i, pid, err)
		}
		defer act.Close()
		a.acts = append(a.acts, act)
	}
	a.gone = make([]bool, len(a.acts))
	a.order = make([][]uint32, len(a.acts))
	if f, err := opt.FS.OpenPageFlags(); err == nil {
		a.flags = f
		defer f.Close()
	}
	tracker := "live"
	if fut != nil {
		tracker = "replay"
	}
	if n, ok := tr.(interface{ TrackerName() string }); ok {
		tracker = n.TrackerName()
	}
	out, err := newRunFiles(opt, tracker, tr.Header(), tr.Targets())
	if err != nil {
		return sum, err
	}
	defer func() {
		if cerr := out.finish(a.sum); err == nil {
			err = cerr
		}
	}()
	a.prev = a.counters()

	start := time.Now()
	for k := 0; opt.Windows == 0 || k < opt.Windows; k++ {
		if !sleepUntil(ctx, start.Add(time.Duration(k)*opt.Window)) {
			break
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
		if err := out.write(win, &row, skipped); err != nil {
			return a.sum, err
		}
		if opt.Log != nil {
			b, _ := row.MarshalJSON()
			if _, err := opt.Log.Write(append(b, '\n')); err != nil {
				return a.sum, fmt.Errorf("write log: %w", err)
			}
		}
		if opt.Metrics != nil {
			opt.Metrics.observe(&row)
		}
		if slices.Index(a.gone, false) < 0 {
			break // every target exited
		}
	}
	return a.sum, nil
}

// sleepUntil waits until t; false if ctx was canceled first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

// skip is a page decided but not reclaimed, with the cause.
type skip struct {
	page  uint32
	cause string
}

// window runs the agent's steps for window k, whose events win has just
// happened:
//
//  1. The window's touches update the model's state (SPEC section 1:
//     accesses, then births of pages not alive).
//  2. Pagemap is read for every alive page: a page the agent put out and
//     found present is a promotion, one still out a saved page-window; an
//     alive page out that the agent did not put out was reclaimed by the
//     kernel.
//  3. The policy's Decider sees every alive page the agent has not put
//     out, in dense-ID order, as the simulator does.
//  4. The safety limits keep some decided pages (skipped).
//  5. The rest go to process_madvise(MADV_PAGEOUT), per target; pagemap is
//     re-read for them: out, or refused with the reason.
//  6. The window's frees end lives.
func (a *agent) window(k int, win *trace.Window) (Row, []skip, error) {
	cpu0 := collect.CPUTime()
	t0 := time.Now()
	row := Row{Window: int64(k), Accessed: int64(len(win.Accessed))}

	// 1. Touches.
	for range win.New {
		id := uint32(len(a.pages))
		t, v := a.tr.Page(id)
		a.pages = append(a.pages, page{})
		a.vpn = append(a.vpn, v)
		a.tgt = append(a.tgt, int32(t))
		a.order[t] = append(a.order[t], id)
	}
	if len(win.New) > 0 {
		for _, o := range a.order {
			slices.SortFunc(o, func(x, y uint32) int { return cmpU64(a.vpn[x], a.vpn[y]) })
		}
	}
	for _, id := range win.Accessed {
		p := &a.pages[id]
		p.accessed = true
		touch(p, k, !p.alive)
	}
	for _, id := range win.Born {
		if p := &a.pages[id]; !p.alive {
			touch(p, k, true)
		}
	}

	// 2. Measure.
	var back []skip
	if err := a.scan(&row); err != nil {
		return row, nil, err
	}
	for id := range a.pages {
		p := &a.pages[id]
		if !p.alive || a.gone[a.tgt[id]] {
			p.accessed = false
			continue
		}
		row.Alive++
		e := a.entries[id]
		present := e&collect.PagemapPresent != 0
		switch {
		case p.out && present:
			p.out = false
			if p.accessed {
				row.Promotions++
			} else {
				// Back without an access (swapoff, readahead): from the end
				// of the previous window, as if not reclaimed.
				row.SwapInOther++
				back = append(back, skip{uint32(id), CauseBack})
			}
		case p.out:
			row.Saved++
		case !present && e&collect.PagemapSwapped != 0:
			p.kout = true
			row.KernelOut++
		case present && p.kout:
			p.kout = false
			row.KernelIn++
		}
		p.accessed = false
	}
	a.sloCheck(&row)

	// 3. Decide.
	var decided []uint32
	var st policy.PageState
	for id := range a.pages {
		p := &a.pages[id]
		if !p.alive || p.out || a.gone[a.tgt[id]] {
			continue
		}
		st = policy.PageState{Page: uint32(id), Now: k, LastTouch: p.last, Prior: p.prior, Features: p.features}
		if a.gaps != nil {
			g := a.gaps[id][p.next]
			st.Idle, st.Closed = g.idle, g.closed
		}
		if a.dec.Reclaim(&st) {
			decided = append(decided, uint32(id))
		}
	}
	row.Decided = int64(len(decided))

	// 4. Safety limits.
	var skipped []skip
	skipAll := func(cause string, n *int64) {
		for _, id := range decided {
			skipped = append(skipped, skip{id, cause})
		}
		*n += int64(len(decided))
		decided = nil
	}
	row.SwapFree, row.PSISome = a.swapFree(), a.psi()
	switch {
	case a.opt.DryRun:
		skipAll(CauseDry, &row.SkippedDry)
	case a.opt.SLO > 0 && a.sloBad >= a.opt.SLOWindows:
		skipAll(CauseSLO, &row.SkippedSLO)
	case a.opt.PSIThreshold > 0 && row.PSISome > a.opt.PSIThreshold:
		skipAll(CausePSI, &row.SkippedPSI)
	}
	if len(decided) > a.opt.MaxPages {
		for _, id := range decided[a.opt.MaxPages:] {
			skipped = append(skipped, skip{id, CauseLimit})
		}
		row.SkippedLimit = int64(len(decided) - a.opt.MaxPages)
		decided = decided[:a.opt.MaxPages]
	}
	if ps := int64(a.tr.Header().PageSize); len(decided) > 0 && ps > 0 {
		room := max((row.SwapFree-a.opt.SwapFloorBytes)/ps, 0)
		if int64(len(decided)) > room {
			for _, id := range decided[room:] {
				skipped = append(skipped, skip{id, CauseSwap})
			}
			row.SkippedSwap = int64(len(decided)) - room
			decided = decided[:room]
		}
	}

	// 5. Reclaim and confirm.
	sk, err := a.reclaim(&row, decided)
	if err != nil {
		return row, nil, err
	}
	skipped = append(skipped, sk...)
	skipped = append(skipped, back...)

	// 6. Frees.
	for _, id := range win.Freed {
		if p := &a.pages[id]; p.alive {
			p.alive, p.out, p.kout = false, false, false
			p.next++
		}
	}

	a.crossCheck(&row)
	if rep, ok := a.tr.(WorkloadReporter); ok {
		if w := rep.Workload(); w != nil {
			row.Touches, row.TouchesPerSec = int64(w.Accessed), w.TouchesPerSec
			row.TouchP50NS, row.TouchP99NS, row.TouchMaxNS = w.P50NS, w.P99NS, w.MaxNS
			row.SlowTouches, row.SlowNS = int64(w.SlowTouches), w.SlowNS
		}
	}
	row.CPUNS = int64(collect.CPUTime() - cpu0)
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

func cmpU64(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// touch records a touch of p in window k, as the simulator does.
func touch(p *page, k int, newLife bool) {
	if newLife {
		p.alive = true
		p.prior = trace.Inf
	} else {
		p.prior = k - p.last
		p.next++
	}
	p.features = p.features.Next(p.prior)
	p.last = k
}

// scan reads the pagemap entry of every page into a.entries, one read per
// run of consecutive virtual pages.
func (a *agent) scan(row *Row) error {
	if cap(a.entries) < len(a.pages) {
		a.entries = make([]uint64, len(a.pages), 2*len(a.pages))
	}
	a.entries = a.entries[:len(a.pages)]
	for t, ids := range a.order {
		if a.gone[t] {
			continue
		}
		if err := a.readRuns(t, ids, a.entries, row); err != nil {
			if errors.Is(err, collect.ErrNoProcess) {
				a.gone[t] = true
				continue
			}
			return err
		}
	}
	return nil
}

// readRuns reads the entries of pages ids (in virtual page order) of target
// t into dst[id]: one read per span of pages, a span bridging gaps of up to
// spanGap pages (reading a few unneeded entries costs less than a system
// call).
func (a *agent) readRuns(t int, ids []uint32, dst []uint64, row *Row) error {
	pm := a.acts[t].Pagemap()
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && a.vpn[ids[j]]-a.vpn[ids[j-1]] <= spanGap {
			j++
		}
		first := a.vpn[ids[i]]
		n := int(a.vpn[ids[j-1]]-first) + 1
		if cap(a.buf) < n {
			a.buf = make([]uint64, n)
		}
		b := a.buf[:n]
		if err := pm.Read(first, b); err != nil {
			if isGone(err) {
				return fmt.Errorf("%w: %v", collect.ErrNoProcess, err)
			}
			return err
		}
		row.Syscalls += int64((n + 8191) / 8192)
		row.Scanned += int64(n)
		for _, id := range ids[i:j] {
			dst[id] = b[a.vpn[id]-first]
		}
		i = j
	}
	return nil
}

// spanGap is the widest gap of unneeded pages a pagemap read spans: 64
// entries, 512 bytes.
const spanGap = 64

func isGone(err error) bool {
	return errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such process")
}

// reclaim pages out the decided pages, per target, and confirms them.
func (a *agent) reclaim(row *Row, decided []uint32) ([]skip, error) {
	var skipped []skip
	for t := range a.acts {
		var ids []uint32
		var vpns []uint64
		for _, id := range decided {
			if int(a.tgt[id]) == t {
				ids = append(ids, id)
				vpns = append(vpns, a.vpn[id])
			}
		}
		if len(ids) == 0 {
			continue
		}
		if a.gone[t] {
			for _, id := range ids {
				skipped = append(skipped, skip{id, CauseGone})
			}
			row.SkippedGone += int64(len(ids))
			continue
		}
		st, err := a.acts[t].PageOut(vpns)
		row.Syscalls += int64(st.Syscalls)
		if errors.Is(err, collect.ErrNoProcess) {
			a.gone[t] = true
			for _, id := range ids {
				skipped = append(skipped, skip{id, CauseGone})
			}
			row.SkippedGone += int64(len(ids))
			continue
		}
		if err != nil {
			return nil, err
		}
		row.Reclaimed += int64(len(ids))
		slices.SortFunc(ids, func(x, y uint32) int { return cmpU64(a.vpn[x], a.vpn[y]) })
		if err := a.readRuns(t, ids, a.entries, row); err != nil {
			if errors.Is(err, collect.ErrNoProcess) {
				a.gone[t] = true
				continue
			}
			return nil, err
		}
		for _, id := range ids {
			e := a.entries[id]
			if e&collect.PagemapPresent == 0 {
				a.pages[id].out = true
				a.pages[id].kout = false
				row.Out++
				continue
			}
			r := a.flags.Refusal(e)
			if a.flags != nil {
				row.Syscalls += 2
			}
			row.Refused++
			row.RefusedBy[r]++
			skipped = append(skipped, skip{id, "refused:" + r.String()})
		}
	}
	return skipped, nil
}

// sloCheck updates the SLO guard with the window's measured promotion rate.
func (a *agent) sloCheck(row *Row) {
	if a.opt.SLO <= 0 {
		return
	}
	pr := 0.0
	if row.Accessed > 0 {
		pr = float64(row.Promotions) / float64(row.Accessed)
	}
	if pr > a.opt.SLO {
		a.sloBad++
	} else {
		a.sloBad = 0
	}
}

// CheckSwap returns collect.ErrNoSwap when no swap device is active: the
// agent then refuses to run (except a dry run).
func CheckSwap(fsys collect.FS) error {
	sw, err := fsys.Swaps()
	if err != nil {
		return fmt.Errorf("read swaps: %w", err)
	}
	for _, d := range sw {
		if d.SizeBytes > 0 {
			return nil
		}
	}
	return collect.ErrNoSwap
}

// swapFree returns the free bytes of all swap devices.
func (a *agent) swapFree() int64 {
	sw, err := a.opt.FS.Swaps()
	if err != nil {
		return 0
	}
	var free int64
	for _, d := range sw {
		free += d.SizeBytes - d.UsedBytes
	}
	return free
}

// psi returns the "some avg10" percentage of the pressure file, -1 when it
// cannot be read.
func (a *agent) psi() float64 {
	path := a.opt.PSIPath
	if path == "" {
		path = filepath.Join(a.opt.FS.Proc, "pressure/memory")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	v, ok := parsePSISome(string(b))
	if !ok {
		return -1
	}
	return v
}

// parsePSISome returns avg10 of the "some" line of a pressure file:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
func parsePSISome(s string) (float64, bool) {
	for _, line := range strings.Split(s, "\n") {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(f, "avg10="); ok {
				x, err := strconv.ParseFloat(v, 64)
				return x, err == nil
			}
		}
	}
	return 0, false
}

// counters reads the cross-check counters; -1 for those not available.
func (a *agent) counters() counters {
	c := counters{majflt: -1, pswpin: -1, pswpout: -1, refault: -1}
	var maj int64
	ok := false
	for t, pid := range a.tr.Targets() {
		if a.gone != nil && a.gone[t] {
			continue
		}
		p, err := a.proc.Proc(pid)
		if err != nil {
			continue
		}
		s, err := p.Stat()
		if err != nil {
			continue
		}
		maj += int64(s.MajFlt)
		ok = true
	}
	if ok {
		c.majflt = maj
	}
	if kv, err := collect.KeyValues(filepath.Join(a.opt.FS.Proc, "vmstat"), "pswpin", "pswpout"); err == nil {
		if v, ok := kv["pswpin"]; ok {
			c.pswpin = v
		}
		if v, ok := kv["pswpout"]; ok {
			c.pswpout = v
		}
	}
	if a.opt.Cgroup != "" {
		if kv, err := collect.KeyValues(filepath.Join(a.opt.FS.CgroupDir(a.opt.Cgroup), "memory.stat"), "workingset_refault_anon"); err == nil {
			if v, ok := kv["workingset_refault_anon"]; ok {
				c.refault = v
			}
		}
	}
	return c
}

func delta(now, before int64) int64 {
	if now < 0 || before < 0 {
		return -1
	}
	return now - before
}

// crossCheck fills the kernel's counters and the zram memory use.
func (a *agent) crossCheck(row *Row) {
	c := a.counters()
	row.MajFlt = delta(c.majflt, a.prev.majflt)
	row.PswpIn = delta(c.pswpin, a.prev.pswpin)
	row.PswpOut = delta(c.pswpout, a.prev.pswpout)
	row.RefaultAnon = delta(c.refault, a.prev.refault)
	a.prev = c
	sw, _ := a.opt.FS.Swaps()
	for _, d := range sw {
		dev, ok := strings.CutPrefix(d.Filename, "/dev/")
		if !ok || !strings.HasPrefix(dev, "zram") {
			continue
		}
		z, err := a.opt.FS.ZramStat(dev)
		if err != nil {
			continue
		}
		row.ZramOrig += z.OrigDataBytes
		row.ZramCompr += z.ComprDataBytes
		row.ZramMem += z.MemUsedBytes
	}
}

// runFiles are the files of a run directory, written to temporary files
// (package outfile) and renamed into place together when the run ends.
type runFiles struct {
	dir     string
	files   []*outfile.File
	tw      trace.Writer
	csv     *csv.Writer
	skipped *csv.Writer
	meta    RunInfo
}

// RunInfo is run.json: what compare needs to repeat the setting.
type RunInfo struct {
	// Model is the L-OPP model file of a lopp setting, as given.
	Model    string   `json:"model,omitempty"`
	Setting  string   `json:"setting"`
	Window   string   `json:"window"`
	Tracker  string   `json:"tracker"`
	Targets  []int    `json:"targets"`
	DryRun   bool     `json:"dry_run"`
	MaxPages int      `json:"max_pages"`
	Kernel   string   `json:"kernel"`
	Started  string   `json:"started"`
	Summary  *Summary `json:"summary,omitempty"`
}

// Names of the files in a run directory.
const (
	TraceFile    = "trace.mdkt"
	MeasuredFile = "measured.csv"
	SkippedFile  = "skipped.csv"
	MetaFile     = "run.json"
)

func newRunFiles(opt Options, tracker string, h trace.Header, targets []int) (*runFiles, error) {
	if err := makeRunDir(opt.Dir, opt.Force); err != nil {
		return nil, err
	}
	rf := &runFiles{dir: opt.Dir}
	open := func(name string) (*outfile.File, error) {
		f, err := outfile.Create(filepath.Join(opt.Dir, name))
		if err == nil {
			rf.files = append(rf.files, f)
		}
		return f, err
	}
	tf, err := open(TraceFile)
	if err == nil {
		h.Window = opt.Window
		h.Windows = 0
		var bin *trace.Format
		if bin, err = trace.FormatByName("binary"); err == nil {
			rf.tw, err = bin.NewWriter(tf, h)
		}
	}
	var mf, sf *outfile.File
	if err == nil {
		mf, err = open(MeasuredFile)
	}
	if err == nil {
		sf, err = open(SkippedFile)
	}
	if err != nil {
		rf.abort()
		return nil, err
	}
	rf.csv = csv.NewWriter(mf)
	rf.skipped = csv.NewWriter(sf)
	if err := rf.csv.Write(Columns()); err != nil {
		rf.abort()
		return nil, err
	}
	if err := rf.skipped.Write([]string{"window", "page", "cause"}); err != nil {
		rf.abort()
		return nil, err
	}
	rf.meta = RunInfo{
		Setting: policy.String(opt.Setting), Window: opt.Window.String(), Tracker: tracker,
		Model: opt.Model, Targets: targets, DryRun: opt.DryRun, MaxPages: opt.MaxPages,
		Kernel: kernelRelease(opt.FS), Started: time.Now().UTC().Format(time.RFC3339),
	}
	return rf, nil
}

func kernelRelease(fsys collect.FS) string {
	b, err := os.ReadFile(filepath.Join(fsys.Proc, "sys/kernel/osrelease"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (rf *runFiles) write(win *trace.Window, row *Row, skipped []skip) error {
	if err := rf.tw.WriteWindow(win); err != nil {
		return fmt.Errorf("write %s: %w", TraceFile, err)
	}
	if err := rf.csv.Write(row.csvRecord()); err != nil {
		return fmt.Errorf("write %s: %w", MeasuredFile, err)
	}
	rf.csv.Flush()
	for _, s := range skipped {
		w := row.Window
		if s.cause == CauseBack {
			w--
		}
		if err := rf.skipped.Write([]string{strconv.FormatInt(w, 10), strconv.FormatUint(uint64(s.page), 10), s.cause}); err != nil {
			return fmt.Errorf("write %s: %w", SkippedFile, err)
		}
	}
	rf.skipped.Flush()
	if err := rf.csv.Error(); err != nil {
		return err
	}
	return rf.skipped.Error()
}

func (rf *runFiles) abort() {
	for _, f := range rf.files {
		f.Abort()
	}
}

// finish completes the files and renames them into place; run.json last.
func (rf *runFiles) finish(sum Summary) error {
	err := rf.tw.Close()
	rf.csv.Flush()
	rf.skipped.Flush()
	if err == nil {
		err = rf.csv.Error()
	}
	if err == nil {
		err = rf.skipped.Error()
	}
	if err != nil {
		rf.abort()
		return err
	}
	if err := outfile.CommitAll(rf.files...); err != nil {
		return err
	}
	rf.meta.Summary = &sum
	b, err := json.MarshalIndent(rf.meta, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(filepath.Join(rf.dir, MetaFile), append(b, '\n'))
}
