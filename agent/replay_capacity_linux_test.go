//go:build linux

package agent

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
		opt := DefaultOptions
		opt.Setting, opt.Window, opt.Dir = ss[0], window, run
		opt.PSIThreshold = 0 // other tests on this machine may press its memory
		sum, err := Run(context.Background(), startReplay(t, tr, path, 0), opt)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Windows != len(tr.Windows) {
			t.Fatalf("%d windows run, the trace has %d", sum.Windows, len(tr.Windows))
		}
		c, err := Compare(run, ss[0])
		if err != nil {
			t.Fatal(err)
		}
		checkExact(t, c, run)
	}
}

// TestReplaySenpaiEqualsSimulator runs senpai live on a replay workload:
// every window the agent hands the measured promotions to senpai's loop,
// which names a capacity; measured equals sim.RunControlled in every
// window, with the same capacity in force (measured.csv's setting column)
// and the same switches. The knobs make it probe and back off within the
// trace's 14 windows.
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

// checkControlledReplay runs controller c live on the replay workload of
// tr (run directory run) and checks it against want, the simulator's run
// on tr: checkExact in every window, and measured.csv's setting column and
// switches equal to the simulator's.
//
// A controller is fed the window's measured outcome (agent.Controlled), so
// a page the kernel refuses (or swaps back without an access) changes what
// it sees from the next window on, and with it every later setting: the
// simulator cannot know the kernel's refusals. So a run with refusals is
// repeated (up to replayAttempts runs); the first run without any is held
// to every window. If every run had some, the run whose first refusal came
// latest is held to every window up to and including that one (the
// refusal acts after that window's decisions), and the test says how many
// windows that was.
func checkControlledReplay(t *testing.T, tr *trace.Trace, path, run string, c policy.Controller, want *sim.Controlled) {
	t.Helper()
	const replayAttempts = 3
	best, bestRun := -1, ""
	for a := 1; a <= replayAttempts; a++ {
		dir := fmt.Sprintf("%s-%d", run, a)
		ctl := replayControlled(t, tr, path, dir, c)
		first := firstDisturbed(t, dir, len(tr.Windows))
		if first < 0 {
			checkControlledRun(t, dir, c, want, ctl, len(tr.Windows))
			return
		}
		t.Logf("run %d: the kernel refused or returned a page in window %d; the controller's later inputs differ from the model's", a, first)
		if first > best {
			best, bestRun = first, dir
		}
	}
	t.Logf("every run had refusals: %s held to windows 0..%d of %d", bestRun, best, len(tr.Windows))
	checkControlledRun(t, bestRun, c, want, nil, best+1)
}

// replayControlled runs controller c on the replay workload of tr into run.
func replayControlled(t *testing.T, tr *trace.Trace, path, run string, c policy.Controller) *Controlled {
	t.Helper()
	ctl := NewControlled(c)
	opt := DefaultOptions
	opt.Setting, opt.Controller, opt.Window, opt.Dir = ctl.Setting(), ctl, tr.Header.Window, run
	opt.PSIThreshold = 0 // other tests on this machine may press its memory
	sum, err := Run(context.Background(), startReplay(t, tr, path, 0), opt)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Windows != len(tr.Windows) {
		t.Fatalf("%d windows run, the trace has %d", sum.Windows, len(tr.Windows))
	}
	return ctl
}

// firstDisturbed returns the first window of run in which the kernel
// refused a page or returned one without an access, or -1.
func firstDisturbed(t *testing.T, run string, windows int) int {
	t.Helper()
	skips, err := readSkipped(filepath.Join(run, SkippedFile), windows, 1<<31)
	if err != nil {
		t.Fatal(err)
	}
	first := -1
	for _, s := range skips {
		if (s.cause == CauseBack || strings.HasPrefix(s.cause, "refused:")) && (first < 0 || s.window < first) {
			first = s.window
		}
	}
	return first
}

// checkControlledRun checks run's first n windows against want: checkExact,
// and measured.csv's setting column; with ctl (all windows), the switches.
func checkControlledRun(t *testing.T, run string, c policy.Controller, want *sim.Controlled, ctl *Controlled, n int) {
	t.Helper()
	cmp, err := CompareControlled(run, c)
	if err != nil {
		t.Fatal(err)
	}
	part := *cmp
	part.Windows = cmp.Windows[:n]
	checkExact(t, &part, run)
	f, err := os.Open(filepath.Join(run, MeasuredFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	if head[len(head)-2] != "setting" || head[len(head)-1] != "switch" {
		t.Fatalf("measured.csv ends with %v, want setting, switch", head[len(head)-2:])
	}
	switches := 0
	for w, rec := range recs[1 : n+1] {
		if got := rec[len(rec)-2]; got != want.Settings[w] {
			t.Errorf("window %d: setting %s, the simulator's %s", w, got, want.Settings[w])
		}
		if rec[len(rec)-1] == "1" {
			switches++
		}
	}
	if ctl == nil {
		return
	}
	if switches != len(want.Switches) || len(ctl.Switches) != len(want.Switches) {
		t.Errorf("%d switches in measured.csv, %d in the run, the simulator %d", switches, len(ctl.Switches), len(want.Switches))
	}
}
