//go:build linux

package agent

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// TestReplayLRUEqualsSimulator applies lru (a capacity: every window the
// agent ranks all the workload's resident pages) for real to a replay
// workload on zram swap, as TestReplayEqualsSimulator does for the
// policies deciding page by page: measured equals the simulator in every
// window, and the agent decides exactly the simulator's pages.
func TestReplayLRUEqualsSimulator(t *testing.T) {
	testutil.SetupZram(t, 256<<20)
	const window = time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	for _, spec := range []string{"lru:C=40%", "lru:C=1500"} {
		ss, err := policy.Parse(spec, window)
		if err != nil || len(ss) != 1 {
			t.Fatalf("parse %s: %v %v", spec, ss, err)
		}
		run := filepath.Join(dir, "lru-"+ss[0].Params()[2:])
		checkExact(t, replayFixed(t, tr, path, run, ss[0], 0), run)
	}
}

// TestReplaySenpaiEqualsSimulator runs senpai live on a replay workload
// whose first pages are locked: every window the agent hands the model's
// promotions to senpai's loop, which names a capacity; measured equals
// sim.RunControlled in every window less the refused pages' effect, with
// the same capacity in force (measured.csv's setting column) and the same
// switches. The knobs make it probe and back off within the trace's 14
// windows.
func TestReplaySenpaiEqualsSimulator(t *testing.T) {
	testutil.SetupZram(t, 256<<20)
	const window = time.Second
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	s, err := policy.ParseSenpai("senpai:min_size=0,interval=1,max_probe=30%,pressure=2ms,swapin_ns=10533")
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.RunControlled(context.Background(), tr, s)
	if err != nil {
		t.Fatal(err)
	}
	if r := want.Run.(*policy.SenpaiRun); r.Probes == 0 || r.Backoffs == 0 {
		t.Fatalf("senpai probes %d and backoffs %d times on the workload: the test exercises too little", r.Probes, r.Backoffs)
	}
	checkControlledReplay(t, tr, path, filepath.Join(dir, "senpai"), s, want)
}

// replayLocked is how many of the replay workload's first pages a
// controller's replay test mlocks: the kernel refuses those the controller
// decides, so the measured outcome differs from the model's.
const replayLocked = 600

// checkControlledReplay runs controller c live on the replay workload of
// tr (run directory run), its first replayLocked pages locked, and checks it
// against want, the simulator's run on tr, in every window: checkExact
// (decisions, and measured = predicted - refused - swapped back in);
// measured.csv's setting column and switches; and the outcome the
// controller was fed, which is the simulator's, and is the measured one
// plus the effect of the refused and returned pages as compare computes it.
// The refusals must have changed the measured outcome, or the test checks
// nothing of what the controller is fed.
func checkControlledReplay(t *testing.T, tr *trace.Trace, path, run string, c policy.Controller, want *sim.Controlled) {
	t.Helper()
	fc := &fedController{Controller: c}
	ctl := replayControlled(t, tr, path, run, fc, replayLocked)
	cmp := checkControlledRun(t, run, c, want, ctl)
	tot := cmp.Total
	if tot.Refused == 0 || tot.RefusedPromotions+tot.RefusedSaved == 0 {
		t.Fatalf("%d pages refused, explaining %d promotions and %d saved page-windows: the measured outcome is the model's, the test checks nothing", tot.Refused, tot.RefusedPromotions, tot.RefusedSaved)
	}
	if len(fc.fed) != len(tr.Windows) {
		t.Fatalf("the controller was fed %d windows, the trace has %d", len(fc.fed), len(tr.Windows))
	}
	res := want.Result
	for w, got := range fc.fed {
		d := cmp.Windows[w]
		simOut := policy.Outcome{Promotions: res.Promotions[w], Accessed: res.Accessed[w], Saved: res.SavedPerWindow[w], Alive: res.AlivePerWindow[w]}
		fromMeasured := policy.Outcome{
			Promotions: d.Promotions + d.RefusedPromotions + d.SkippedPromotions + d.BackPromotions,
			Accessed:   d.Accessed,
			Saved:      d.Saved + d.RefusedSaved + d.SkippedSaved + d.BackSaved,
			Alive:      res.AlivePerWindow[w],
		}
		if got != simOut || got != fromMeasured {
			t.Errorf("window %d: the controller was fed %+v, the simulator's outcome is %+v, measured plus the refused pages' effect %+v", w, got, simOut, fromMeasured)
		}
	}
	t.Logf("%d pages refused: %d promotions and %d saved page-windows the controller was fed and the kernel did not take", tot.Refused, tot.RefusedPromotions, tot.RefusedSaved)
}

// fedController is a policy.Controller recording the outcome its run is
// fed in every window.
type fedController struct {
	policy.Controller
	fed []policy.Outcome
}

func (f *fedController) NewRun(h trace.Header) policy.ControlRun {
	return &fedRun{f.Controller.NewRun(h), f}
}

type fedRun struct {
	policy.ControlRun
	f *fedController
}

func (r *fedRun) EndWindow(w *trace.Window, o policy.Outcome) (policy.Online, error) {
	r.f.fed = append(r.f.fed, o)
	return r.ControlRun.EndWindow(w, o)
}

// replayControlled runs controller c on the replay workload of tr into run,
// the workload's first lock pages locked.
func replayControlled(t *testing.T, tr *trace.Trace, path, run string, c policy.Controller, lock int) *Controlled {
	t.Helper()
	ctl := NewControlled(c)
	opt := DefaultOptions
	opt.Setting, opt.Controller = ctl.Setting(), ctl
	replayRun(t, tr, path, run, opt, lock)
	return ctl
}

// checkControlledRun checks run against want in every window: checkExact,
// measured.csv's setting column and the switches (ctl's and measured.csv's).
// It returns the comparison.
func checkControlledRun(t *testing.T, run string, c policy.Controller, want *sim.Controlled, ctl *Controlled) *Comparison {
	t.Helper()
	cmp, err := CompareControlled(run, c)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, cmp, run)
	rd, err := ReadRun(run)
	if err != nil {
		t.Fatal(err)
	}
	switches := 0
	for w, r := range rd.Rows {
		if r.Setting != want.Settings[w] {
			t.Errorf("window %d: setting %s, the simulator's %s", w, r.Setting, want.Settings[w])
		}
		if r.Switched {
			switches++
		}
	}
	if switches != len(want.Switches) || len(ctl.Switches) != len(want.Switches) {
		t.Errorf("%d switches in measured.csv, %d in the run, the simulator %d", switches, len(ctl.Switches), len(want.Switches))
	}
	return cmp
}

// TestDryRunControllerFollowsSimulator runs gswap as a dry run on the
// replay workload: nothing is reclaimed, so nothing is measured, yet the
// controller is fed the model's outcome (every decided page absent, cause
// dry) and its settings, switches and decisions are sim.RunControlled's in
// every window. Fed the measured outcome, it would see no promotion at all.
func TestDryRunControllerFollowsSimulator(t *testing.T) {
	const window = 100 * time.Millisecond
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	c, err := policy.ParseController("gswap:budget=100%,min=1,K=90,S=2,history=4", policy.ControllerOptions{Window: window})
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.RunControlled(context.Background(), tr, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Switches) == 0 || want.Result.TotalPromotions() == 0 {
		t.Fatalf("gswap switches %d times, %d promotions: the test exercises nothing", len(want.Switches), want.Result.TotalPromotions())
	}
	fc := &fedController{Controller: c}
	ctl := NewControlled(fc)
	opt := DefaultOptions
	opt.Setting, opt.Controller, opt.DryRun = ctl.Setting(), ctl, true
	run := filepath.Join(dir, "run")
	replayRun(t, tr, path, run, opt, 0)
	cmp, err := CompareControlled(run, c)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := ReadRun(run)
	if err != nil {
		t.Fatal(err)
	}
	res := want.Result
	for w, d := range cmp.Windows {
		simOut := policy.Outcome{Promotions: res.Promotions[w], Accessed: res.Accessed[w], Saved: res.SavedPerWindow[w], Alive: res.AlivePerWindow[w]}
		if fc.fed[w] != simOut {
			t.Errorf("window %d: the controller was fed %+v, the simulator's outcome is %+v", w, fc.fed[w], simOut)
		}
		if d.Decided != d.PredDecided || rd.Rows[w].SkippedDry != d.Decided {
			t.Errorf("window %d: decided %d (%d dry), the simulator %d", w, d.Decided, rd.Rows[w].SkippedDry, d.PredDecided)
		}
		if rd.Rows[w].Setting != want.Settings[w] {
			t.Errorf("window %d: setting %s, the simulator's %s", w, rd.Rows[w].Setting, want.Settings[w])
		}
	}
	if len(ctl.Switches) != len(want.Switches) || cmp.Total.Promotions != 0 {
		t.Errorf("%d switches, the simulator %d; %d promotions measured in a dry run", len(ctl.Switches), len(want.Switches), cmp.Total.Promotions)
	}
}
