//go:build linux

package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/linux"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
	"mdk/tune"
	"mdk/workload"
)

// The test binary is also the replay workload: with MDK_TEST_WORKLOAD set to
// a trace file, it serves the workload protocol instead of running tests.
func TestMain(m *testing.M) {
	if path := os.Getenv("MDK_TEST_WORKLOAD"); path != "" {
		t, err := readTrace(path)
		lock, _ := strconv.Atoi(os.Getenv("MDK_TEST_LOCK"))
		clock, _ := time.ParseDuration(os.Getenv("MDK_TEST_CLOCK"))
		if err == nil {
			err = workload.Replay(t, workload.Options{Lock: lock, Window: clock}, os.Stdin, os.Stdout)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func readTrace(path string) (*trace.Trace, error) {
	rd, c, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return trace.ReadAll(rd)
}

// genTrace writes a small mdk gen workload to dir and returns it.
func genTrace(t *testing.T, dir string, window time.Duration) (*trace.Trace, string) {
	t.Helper()
	cfg := gen.DefaultConfig
	cfg.Pages, cfg.Windows, cfg.Window, cfg.Seed = 4000, 14, window, 3
	path := filepath.Join(dir, "workload.mdkt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := trace.FormatByName("binary")
	w, err := bin.NewWriter(f, cfg.Header())
	if err == nil {
		err = gen.Generate(cfg, w)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	tr, err := readTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr, path
}

// startReplay starts this test binary as the replay workload of path.
func startReplay(t testing.TB, tr *trace.Trace, path string, lock int) *Replay {
	t.Helper()
	cmd := []string{"env", "MDK_TEST_WORKLOAD=" + path, "MDK_TEST_LOCK=" + strconv.Itoa(lock), os.Args[0]}
	r, err := StartReplay(tr, cmd, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// replayRun runs the agent with opt on the replay workload of tr (the file
// path) into run, in the windows of tr, the workload's first lock pages
// locked, and checks that it ran every window.
func replayRun(t *testing.T, tr *trace.Trace, path, run string, opt Options, lock int) {
	t.Helper()
	opt.Window, opt.Dir = tr.Header.Window, run
	opt.PSIThreshold = 0 // other tests on this machine may press its memory
	sum, err := Run(context.Background(), startReplay(t, tr, path, lock), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Windows != len(tr.Windows) {
		t.Fatalf("%d windows run, the trace has %d", sum.Windows, len(tr.Windows))
	}
}

// replayFixed runs setting s on the replay workload of tr into run (the
// first lock pages locked) and returns the side-by-side.
func replayFixed(t *testing.T, tr *trace.Trace, path, run string, s policy.Setting, lock int) *Comparison {
	t.Helper()
	opt := DefaultOptions
	opt.Setting = s
	replayRun(t, tr, path, run, opt, lock)
	c, err := Compare(run, s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReplayEqualsSimulator applies age, paw and opp for real to a replay
// workload on zram swap, in 1 s windows, and checks that what the agent
// measured is exactly what the simulator predicts on the observed trace:
// in every window, measured promotions and saved page-windows equal the
// prediction minus the effect of the pages the kernel refused, and equal
// the prediction where no page was refused; refused pages are counted
// exactly; the agent decides exactly the simulator's pages.
func TestReplayEqualsSimulator(t *testing.T) {
	testutil.SetupZram(t, 256<<20)
	const window = time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	for _, spec := range []string{"age:A=1", "paw:P=2,wait=1", "opp:r=5%"} {
		t.Run(strings.Split(spec, ":")[0], func(t *testing.T) {
			t.Parallel()
			ss, err := policy.Parse(spec, window)
			if err != nil || len(ss) != 1 {
				t.Fatalf("parse %s: %v %v", spec, ss, err)
			}
			run := filepath.Join(dir, strings.Split(spec, ":")[0])
			c := replayFixed(t, tr, path, run, ss[0], 0)
			checkExact(t, c, run)
			var sb strings.Builder
			c.WriteText(&sb)
			t.Logf("%s\n%s", spec, sb.String())
		})
	}
}

// TestReplayLOPPVariantsEqualSimulator is TestReplayEqualsSimulator for
// L-OPP's per-window ration (the decide stage gives the decider every
// candidate of the window first, with the window's measured |A_k|) and its
// idle-time variant (decisions at any window of a gap), each with a
// hand-made model.
func TestReplayLOPPVariantsEqualSimulator(t *testing.T) {
	testutil.SetupZram(t, 256<<20)
	const window = time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	for i, s := range []policy.Setting{
		policy.LOPPRation{Theta: 0.3, PPM: 50000, Model: testutil.TieScorer{}},
		policy.LOPPIdle{Theta: 0.9, Model: testutil.IdleScorer{}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			run := filepath.Join(dir, fmt.Sprint("lopp", i))
			c := replayFixed(t, tr, path, run, s, 0)
			checkExact(t, c, run)
			var sb strings.Builder
			c.WriteText(&sb)
			t.Logf("%s\n%s", policy.String(s), sb.String())
		})
	}
}

// TestReplayRefusedCounted makes the workload mlock its first pages, which
// MADV_PAGEOUT refuses, and checks that every refused page is counted, with
// the reason "locked", exactly: the decided pages among the locked ones, in
// every window; and that the side-by-side explains every difference by them.
func TestReplayRefusedCounted(t *testing.T) {
	testutil.SetupZram(t, 256<<20)
	const window = time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	const lock = 600
	ss, err := policy.Parse("age:A=1", window)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	c := replayFixed(t, tr, path, run, ss[0], lock)
	checkExact(t, c, run)
	// The pages the simulator reclaims among the locked ones, per window.
	want := make([]int64, len(tr.Windows))
	sim.RunObserved(tr, ss[0], func(p uint32, _, at int) {
		if p < lock {
			want[at]++
		}
	})
	f, err := os.Open(filepath.Join(run, MeasuredFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadMeasured(f, MeasuredFile)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The locked pages are refused exactly. Besides them, the kernel may
	// refuse a page that is still in a per-CPU LRU batch (not_lru), or one
	// that an access raced with (unknown): those are transient, counted
	// under their own reason (checkExact checks every refusal is counted and
	// explained), and never a locked, shared or huge page here.
	var total, transient int64
	for w, r := range rows {
		other := r.Refused - r.RefusedBy[linux.RefusedLocked]
		if r.RefusedBy[linux.RefusedLocked] != want[w] || other != r.RefusedBy[linux.RefusedNotLRU]+r.RefusedBy[linux.RefusedUnknown] {
			t.Errorf("window %d: %d refused (%d locked, by reason %v), expected %d locked pages and only transient others", w, r.Refused, r.RefusedBy[linux.RefusedLocked], r.RefusedBy, want[w])
		}
		total += r.Refused
		transient += other
	}
	if transient > 0 {
		t.Logf("%d pages refused while in a per-CPU batch or racing an access (not locked)", transient)
	}
	if total == 0 {
		t.Fatal("no page was refused: the test checks nothing")
	}
	if c.Total.RefusedPromotions == 0 || c.Total.RefusedSaved == 0 {
		t.Errorf("refused pages explain %d promotions and %d saved page-windows, expected both > 0", c.Total.RefusedPromotions, c.Total.RefusedSaved)
	}
	t.Logf("%d pages refused; they explain %d promotions and %d saved page-windows", total, c.Total.RefusedPromotions, c.Total.RefusedSaved)
}

func checkExact(t *testing.T, c *Comparison, run string) {
	t.Helper()
	tot := c.Total
	if tot.Decided == 0 || tot.Promotions == 0 || tot.Saved == 0 {
		t.Errorf("nothing happened: decided %d, promotions %d, saved %d", tot.Decided, tot.Promotions, tot.Saved)
	}
	f, err := os.Open(filepath.Join(run, MeasuredFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadMeasured(f, MeasuredFile)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	skips, err := readSkipped(filepath.Join(run, SkippedFile), len(rows), 1<<31)
	if err != nil {
		t.Fatal(err)
	}
	refusedIn := make([]int64, len(rows))
	for _, s := range skips {
		if s.cause == CauseBack {
			t.Logf("window %d: page %d came back without an access", s.window+1, s.page)
			continue
		}
		if !strings.HasPrefix(s.cause, "refused:") {
			t.Errorf("window %d: page %d skipped (%s), expected no safety limit to act", s.window, s.page, s.cause)
			continue
		}
		refusedIn[s.window]++
	}
	clean := 0
	for w, d := range c.Windows {
		r := rows[w]
		if d.Decided != d.PredDecided {
			t.Errorf("window %d: agent decided %d pages, the simulator %d", w, d.Decided, d.PredDecided)
		}
		if r.Reclaimed != r.Out+r.Refused || r.Decided != r.Reclaimed {
			t.Errorf("window %d: decided %d, reclaimed %d = out %d + refused %d does not add up", w, r.Decided, r.Reclaimed, r.Out, r.Refused)
		}
		var by int64
		for _, n := range r.RefusedBy {
			by += n
		}
		if by != r.Refused || refusedIn[w] != r.Refused {
			t.Errorf("window %d: %d refused, %d by reason, %d in %s", w, r.Refused, by, refusedIn[w], SkippedFile)
		}
		if d.ResidualPromotions != 0 || d.ResidualSaved != 0 {
			t.Errorf("window %d: promotions measured %d, predicted %d (refused gaps %d); saved measured %d, predicted %d (refused gaps %d)",
				w, d.Promotions, d.PredPromotions, d.RefusedPromotions, d.Saved, d.PredSaved, d.RefusedSaved)
		}
		if d.RefusedPromotions == 0 && d.RefusedSaved == 0 && d.BackPromotions == 0 && d.BackSaved == 0 {
			clean++
			if d.Promotions != d.PredPromotions || d.Saved != d.PredSaved {
				t.Errorf("window %d, untouched by refusals: promotions %d, predicted %d; saved %d, predicted %d", w, d.Promotions, d.PredPromotions, d.Saved, d.PredSaved)
			}
		}
		if d.KernelOut != 0 || d.KernelIn != 0 || d.SwapInOther != 0 {
			t.Logf("window %d: outside the model: kernel out %d, kernel in %d, other swap-ins %d", w, d.KernelOut, d.KernelIn, d.SwapInOther)
		}
		if r.MajFlt >= 0 && r.MajFlt < r.Promotions {
			t.Errorf("window %d: %d promotions measured but only %d major faults of the workload", w, r.Promotions, r.MajFlt)
		}
	}
	t.Logf("%d of %d windows untouched by refusals; %d pages refused in all", clean, len(c.Windows), tot.Refused)
}

// TestReplayCgroupRefaults runs the replay workload in a memory cgroup of
// its own (cgroup v1 on the development machines, v2 where mounted so) and
// checks the cross-check the agent reads from it: the cgroup's
// workingset_refault_anon counts the swap-ins of the pages the agent put
// out, as do the workload's major faults.
func TestReplayCgroupRefaults(t *testing.T) {
	testutil.SetupZram(t, 128<<20)
	cg := "/sys/fs/cgroup/memory"
	if _, err := os.Stat(filepath.Join(cg, "memory.stat")); err != nil {
		cg = "/sys/fs/cgroup" // cgroup v2
	}
	dir := filepath.Join(cg, fmt.Sprintf("mdk-agent-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a memory cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove cgroup %s: %v", dir, err)
		}
	})
	const window = time.Second
	tdir := t.TempDir()
	tr, path := genTrace(t, tdir, window)
	ss, _ := policy.Parse("age:A=1", window)
	cmd := []string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec env MDK_TEST_WORKLOAD="$1" "$2"`, dir, path, os.Args[0]}
	rep, err := StartReplay(tr, cmd, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions
	opt.Setting, opt.Window, opt.Dir, opt.PSIThreshold, opt.Cgroup = ss[0], window, filepath.Join(tdir, "run"), 0, dir
	if _, err := Run(context.Background(), rep, opt); err != nil {
		t.Fatal(err)
	}
	c, err := Compare(opt.Dir, ss[0])
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, c, opt.Dir)
	if c.RefaultAnon < 0 {
		t.Skipf("%s/memory.stat has no workingset_refault_anon", dir)
	}
	prom := c.Total.Promotions
	if c.RefaultAnon == 0 || c.RefaultAnon > prom+c.Total.SwapInOther+c.Total.KernelIn {
		t.Errorf("cgroup workingset_refault_anon %d, promotions %d: the refaults should be the agent's swap-ins", c.RefaultAnon, prom)
	}
	t.Logf("promotions %d, workingset_refault_anon %d, major faults %d", prom, c.RefaultAnon, c.MajFlt)
	// The workload exited with the run; the cgroup is empty and removable.
	for i := 0; i < 50; i++ {
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if len(strings.TrimSpace(string(b))) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReplayAutoEqualsSimulator runs mdk's auto controller for real on the
// replay workload (zram swap, 1 s windows, the first 600 pages mlocked so
// that the kernel refuses some decided pages) and checks the replay
// tracker's exactness standard: in every window the agent decides the
// simulator's pages (sim.RunControlled on the observed trace) and measures
// its promotions and saved page-windows less the refused pages' effect,
// measured.csv's setting column is the simulator's setting of every window,
// with its switches, and the controller is fed the simulator's outcome
// (checkControlledReplay).
func TestReplayAutoEqualsSimulator(t *testing.T) { replayAutoEqualsSimulator(t) }

// replayAutoEqualsSimulator is TestReplayAutoEqualsSimulator, on the host
// and in the custom guest (TestGuestAgentAuto).
func replayAutoEqualsSimulator(t *testing.T) {
	testutil.SetupZram(t, 256<<20)
	const window = time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	a, err := tune.ParseAuto("auto:age,A=0..4,slo=max_pr<=20%,history=4,every=2,margin=0%", window)
	if err != nil {
		t.Fatal(err)
	}
	checkReplayControlled(t, tr, path, dir, a)
}

// TestReplayControllersEqualSimulator is TestReplayAutoEqualsSimulator's
// standard for the production controllers of the policy package: gswap
// (thresholds from the promotion history) and damos under a quota that
// binds (512 pages per window of 4,000 due: the agent rations the due
// pages as the simulator does, the idle longest first).
func TestReplayControllersEqualSimulator(t *testing.T) {
	testutil.SetupZram(t, 256<<20)
	const window = time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	for _, spec := range []string{"gswap:budget=100%,min=1,K=90,S=2,history=4", "damos:min_age=0,quota=2M/1s"} {
		c, err := policy.ParseController(spec, policy.ControllerOptions{Window: window})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.(*policy.Damos); ok {
			w, err := sim.RunControlled(context.Background(), tr, c)
			if err != nil || slices.Max(w.Decided) != 512 {
				t.Fatalf("%s: the quota never binds (decided %v, %v): the test exercises no rationing", spec, w.Decided, err)
			}
		}
		t.Run(c.Policy(), func(t *testing.T) { checkReplayControlled(t, tr, path, t.TempDir(), c) })
	}
}

// checkReplayControlled replays tr (the workload file path) under
// controller a and checks every window against sim.RunControlled: the
// decided pages, promotions and saved page-windows (checkExact), and the
// setting of every window with its switches in measured.csv.
func checkReplayControlled(t *testing.T, tr *trace.Trace, path, dir string, a policy.Controller) {
	t.Helper()
	want, err := sim.RunControlled(context.Background(), tr, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Switches) == 0 {
		t.Fatal("the controller never switches on the workload: the test exercises nothing")
	}
	checkControlledReplay(t, tr, path, filepath.Join(dir, a.Policy()), a, want)
}
