//go:build linux

package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mdk/internal/testutil"
	"mdk/internal/vmtest"
	"mdk/linux"
	"mdk/policy"
	"mdk/trace"
	"mdk/workload"
)

// TestAgentInGuest boots the custom kernel (idle page tracking, DAMON, zram)
// and runs TestGuestAgentLive, TestGuestAgentDamon and TestGuestAgentAuto
// there.
func TestAgentInGuest(t *testing.T) {
	if _, in := vmtest.InGuest(); in {
		t.Skip("the host side")
	}
	kernel := vmtest.Kernel(t, vmtest.Custom)
	bin := vmtest.BuildTest(t, "mdk/agent")
	vmtest.RunTest(t, vmtest.GuestTest{
		Kernel: kernel, Kind: vmtest.Custom, Binary: bin, Run: "^TestGuestAgent(Live|Damon|Auto)$",
		Timeout: 15 * time.Minute, Memory: 1024, CPUs: 2,
	})
}

// Live tolerance. In a live run the idle tracker, not the trace, is the
// access signal, the workload keeps its own clock, and the simulator runs
// on the trace the tracker observed. The agent applies the policy to the
// whole process, the Go runtime's pages and the binary's text included;
// the text is mapped by the parent test process too, so the kernel refuses
// it (shared), and the comparison counts what each refusal costs. What no
// cause explains (the residual: tracker slack) must stay within
// liveTolerance of the prediction in total (relative, for promotions and
// for saved page-windows) and within liveWindowSlack pages in every window.
const (
	liveTolerance   = 0.05
	liveWindowSlack = 64
)

// TestGuestAgentLive applies age and paw, live, to a self-clocked replay
// workload (its own clock, 2 s windows) with the idle tracker, on zram
// swap, and sets the prediction on the observed trace beside the
// measurement.
func TestGuestAgentLive(t *testing.T) {
	vmtest.RequireGuest(t)
	testutil.SetupZram(t, 128<<20)
	const window = 2 * time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	for _, spec := range []string{"age:A=1", "paw:P=2,wait=1"} {
		name := strings.Split(spec, ":")[0]
		t.Run(name, func(t *testing.T) {
			ss, err := policy.Parse(spec, window)
			if err != nil {
				t.Fatal(err)
			}
			hello := startLive(t, tr, path, window)
			it, err := NewIdle(linux.NewFS("/proc", "/sys"), []int{hello.PID}, window)
			if err != nil {
				t.Fatal(err)
			}
			run := filepath.Join(dir, name)
			opt := DefaultOptions
			opt.Setting, opt.Window, opt.Dir, opt.Windows, opt.PSIThreshold = ss[0], window, run, len(tr.Windows), 0
			if _, err := Run(context.Background(), it, opt); err != nil {
				t.Fatal(err)
			}
			c, err := Compare(run, ss[0])
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			c.WriteText(&sb)
			t.Logf("%s (live, idle tracker):\n%s", spec, sb.String())
			tot := c.Total
			if tot.Decided != tot.PredDecided || tot.Decided == 0 {
				t.Errorf("decided %d, the simulator on the observed trace %d", tot.Decided, tot.PredDecided)
			}
			within := func(what string, residual, pred int64) {
				if float64(abs(residual)) > liveTolerance*float64(pred)+1 {
					t.Errorf("%s: %d unexplained against %d predicted: beyond %v%%", what, residual, pred, 100*liveTolerance)
				}
			}
			within("promotions", tot.ResidualPromotions, tot.PredPromotions)
			within("saved page-windows", tot.ResidualSaved, tot.PredSaved)
			for _, d := range c.Windows {
				if abs(d.ResidualPromotions) > liveWindowSlack || abs(d.ResidualSaved) > liveWindowSlack {
					t.Errorf("window %d: %d promotions and %d saved page-windows unexplained: beyond %d pages", d.Window, d.ResidualPromotions, d.ResidualSaved, liveWindowSlack)
				}
			}
			if tot.Promotions == 0 || tot.Saved == 0 {
				t.Errorf("%d promotions, %d saved page-windows measured: the test checks nothing", tot.Promotions, tot.Saved)
			}
		})
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// startLive starts this test binary as the self-clocked replay workload of
// tr (the file path; its own clock, window) and returns its hello; the
// workload ends when the test does.
func startLive(t *testing.T, tr *trace.Trace, path string, window time.Duration) workload.Hello {
	t.Helper()
	r, err := StartReplay(tr, []string{"env", "MDK_TEST_WORKLOAD=" + path, "MDK_TEST_CLOCK=" + window.String(), os.Args[0]}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.hello
}

// TestGuestAgentDamon applies age, live, with the DAMON tracker (its
// aggregation interval is the window and keeps the agent's clock) to the
// self-clocked replay workload, on zram swap, for a few windows, and asserts
// what holds exactly: the agent's decisions are the simulator's on the
// observed trace, window by window; every decided page is accounted for
// (decided = skipped + reclaimed, reclaimed = out + refused); measured =
// predicted - refused - skipped - swapped back in + residual for promotions
// and saved page-windows in every window and in total; the run ends with
// every window written and DAMON's sysfs as a fresh boot has it. DAMON is
// region-level (a region's untouched pages come out accessed), so the
// residual, tracker slack, is logged, not bounded.
func TestGuestAgentDamon(t *testing.T) {
	vmtest.RequireGuest(t)
	fsys := linux.NewFS("/proc", "/sys")
	if kds, err := fsys.Kdamonds(); err != nil || len(kds) != 0 {
		t.Fatalf("DAMON sysfs at the start: %v, %v; want no kdamonds", kds, err)
	}
	testutil.SetupZram(t, 128<<20)
	const window, windows = 2 * time.Second, 5
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	spec := "age:A=1"
	ss, err := policy.Parse(spec, window)
	if err != nil {
		t.Fatal(err)
	}
	hello := startLive(t, tr, path, window)
	dt, err := NewDamon(context.Background(), fsys, hello.PID, window)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "damon")
	opt := DefaultOptions
	opt.Setting, opt.Window, opt.Dir, opt.Windows, opt.PSIThreshold = ss[0], window, run, windows, 0
	sum, err := Run(context.Background(), dt, opt)
	if err != nil {
		t.Fatal(err)
	}
	if kds, err := fsys.Kdamonds(); err != nil || len(kds) != 0 {
		t.Errorf("DAMON sysfs after the run: %v, %v; want no kdamonds (the agent's is stopped and removed)", kds, err)
	}
	if sum.Windows != windows {
		t.Errorf("%d windows, want %d", sum.Windows, windows)
	}
	info, err := ReadRunInfo(run)
	if err != nil || info.Tracker != "damon" {
		t.Errorf("run.json: tracker %q, %v; want damon", info.Tracker, err)
	}
	c, err := Compare(run, ss[0])
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	c.WriteText(&sb)
	t.Logf("%s (live, DAMON tracker):\n%s", spec, sb.String())
	f, err := os.Open(filepath.Join(run, MeasuredFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ReadMeasured(f, MeasuredFile)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != windows || len(c.Windows) != windows {
		t.Fatalf("%d rows, %d compared windows; want %d", len(rows), len(c.Windows), windows)
	}
	var accessed int64
	for w, d := range c.Windows {
		accessed += d.Accessed
		if d.Decided != d.PredDecided {
			t.Errorf("window %d: agent decided %d pages, the simulator %d", w, d.Decided, d.PredDecided)
		}
	}
	// Every page and difference accounted for, between independent files
	// (checkAccounting; TestCheckAccountingCanFail shows it can fail).
	for _, e := range checkAccounting(rows, c) {
		t.Error(e)
	}
	tot := c.Total
	if tot.Decided != tot.PredDecided || tot.Decided == 0 || sum.Out == 0 || accessed == 0 {
		t.Errorf("decided %d (the simulator %d), %d out, %d accessed: the test checks nothing", tot.Decided, tot.PredDecided, sum.Out, accessed)
	}
}

// TestGuestAgentAuto applies the online tuner (auto) for real, on the
// custom kernel's zram swap, to the replay workload: every window's
// decisions, measured promotions and saved pages and the setting in force
// equal sim.RunControlled's on the trace, and so do the switches
// (TestReplayAutoEqualsSimulator, in the guest's kernel).
func TestGuestAgentAuto(t *testing.T) {
	vmtest.RequireGuest(t)
	replayAutoEqualsSimulator(t)
}
