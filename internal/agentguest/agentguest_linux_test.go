//go:build linux

package agentguest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdk/agent"
	"mdk/internal/testutil"
	"mdk/internal/vmtest"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
	"mdk/tune"
)

// TestControllersInGuest boots the custom kernel (idle page tracking, zram)
// with the mdk binary and runs TestGuestControllersLive there.
func TestControllersInGuest(t *testing.T) {
	if _, in := vmtest.InGuest(); in {
		t.Skip("the host side")
	}
	kernel := vmtest.Kernel(t, vmtest.Custom)
	files := map[string]string{mdkBin: vmtest.BuildGo(t, "mdk/cmd/mdk")}
	vmtest.RunTest(t, vmtest.GuestTest{
		Kernel: kernel, Kind: vmtest.Custom, Binary: vmtest.BuildTest(t, "mdk/internal/agentguest"), Run: "^TestGuestControllersLive$",
		Files: files, Timeout: 10 * time.Minute, Memory: 1024, CPUs: 2,
	})
}

// mdkBin is where the guest has the mdk binary.
const mdkBin = "/work/mdk"

// The live run: windows of window on a generated workload of 4,000 pages.
const (
	window  = 2 * time.Second
	windows = 10
)

// Live tolerance, as the agent's own live guest test has it
// (agent.TestGuestAgentLive): what no cause explains (the residual:
// tracker slack, the idle tracker seeing an access in another window than
// the kernel did) stays within liveTolerance of the prediction in total
// and within liveWindowSlack pages in every window.
const (
	liveTolerance   = 0.05
	liveWindowSlack = 64
)

// liveSpecs are the controllers run live: a capacity (lru, ranking every
// resident page per window), senpai with its swap-in latency in the spec
// (as run.json records it; knobs that make it probe within the run),
// gswap with a budget that moves its threshold, and damos under a quota
// that binds.
var liveSpecs = []string{
	"lru:C=40%",
	"senpai:min_size=0,interval=1,max_probe=30%,pressure=2ms,swapin_ns=10533",
	"gswap:budget=100%,min=1,K=90,S=2,history=4",
	"damos:min_age=0,quota=2M/2s",
}

// TestGuestControllersLive runs each of liveSpecs with mdk agent --pid
// (the idle tracker) on a fresh self-clocked replay workload (mdk workload
// replay --window), on zram swap, and holds the run to the simulator on the
// trace the agent observed: in every window the agent decides the
// simulator's number of pages (sim.RunControlled for a controller, with
// the same setting in force in every window: measured.csv's setting
// column), and measured = predicted - refused - limits - swapped back in +
// residual with the residual (tracker slack) within the live tolerance.
// The agent applies the policy to the whole process: the mdk binary's text
// is mapped by the agent too, so the kernel refuses those pages (shared),
// and a controller fed the measured outcome would drift from the
// prediction; fed the model's, it may not.
func TestGuestControllersLive(t *testing.T) {
	vmtest.RequireGuest(t)
	testutil.SetupZram(t, 128<<20)
	dir := t.TempDir()
	tr, path := genTrace(t, dir)
	for _, spec := range liveSpecs {
		name, _, _ := strings.Cut(spec, ":")
		t.Run(name, func(t *testing.T) {
			pid := startWorkload(t, tr, path)
			run := filepath.Join(dir, name)
			cmd := exec.Command(mdkBin, "agent", "--pid", strconv.Itoa(pid), "--policy", spec,
				"--window", window.String(), "--duration", (windows * window).String(), "--psi", "0", "--log", "", "-o", run)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("mdk %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out)
			}
			checkLive(t, run, spec)
		})
	}
}

// genTrace writes the workload's trace to dir with mdk gen (its default
// model, 4,000 pages) and returns it and its path.
func genTrace(t *testing.T, dir string) (*trace.Trace, string) {
	t.Helper()
	path := filepath.Join(dir, "workload.mdkt")
	cmd := exec.Command(mdkBin, "gen", "--pages", "4000", "--windows", strconv.Itoa(windows), "--window", window.String(), "--seed", "3", "-o", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mdk gen: %v\n%s", err, out)
	}
	rd, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := trace.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return tr, path
}

// startWorkload starts mdk workload replay of tr (the file path) keeping
// its own clock and returns its pid; it ends with the test.
func startWorkload(t *testing.T, tr *trace.Trace, path string) int {
	t.Helper()
	r, err := agent.StartReplay(tr, []string{mdkBin, "workload", "replay", "--window", window.String(), path}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.Targets()[0]
}

// checkLive holds run (of spec) to the simulator on its observed trace.
func checkLive(t *testing.T, run, spec string) {
	t.Helper()
	rd, err := agent.ReadRun(run)
	if err != nil {
		t.Fatal(err)
	}
	var cmp *agent.Comparison
	var want *sim.Controlled
	if tune.IsController(spec) {
		// compare's controller: run.json's spec (senpai's swapin_ns in it).
		c, err := tune.ParseController(rd.Info.Setting, window, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want, err = sim.RunControlled(context.Background(), rd.Trace, c); err != nil {
			t.Fatal(err)
		}
		if cmp, err = agent.CompareControlled(run, c); err != nil {
			t.Fatal(err)
		}
	} else {
		ss, err := policy.Parse(spec, window)
		if err != nil || len(ss) != 1 {
			t.Fatalf("parse %s: %v %v", spec, ss, err)
		}
		if cmp, err = agent.Compare(run, ss[0]); err != nil {
			t.Fatal(err)
		}
	}
	var sb strings.Builder
	cmp.WriteText(&sb)
	t.Logf("%s (live, idle tracker):\n%s", spec, sb.String())
	if len(cmp.Windows) != windows {
		t.Fatalf("%d windows run, want %d", len(cmp.Windows), windows)
	}
	for _, d := range cmp.Windows {
		if d.Decided != d.PredDecided {
			t.Errorf("window %d: agent decided %d pages, the simulator on the observed trace %d", d.Window, d.Decided, d.PredDecided)
		}
		if abs(d.ResidualPromotions) > liveWindowSlack || abs(d.ResidualSaved) > liveWindowSlack {
			t.Errorf("window %d: %d promotions and %d saved page-windows unexplained: beyond %d pages", d.Window, d.ResidualPromotions, d.ResidualSaved, liveWindowSlack)
		}
	}
	tot := cmp.Total
	within := func(what string, residual, pred int64) {
		if float64(abs(residual)) > liveTolerance*float64(pred)+1 {
			t.Errorf("%s: %d unexplained against %d predicted: beyond %v%%", what, residual, pred, 100*liveTolerance)
		}
	}
	within("promotions", tot.ResidualPromotions, tot.PredPromotions)
	within("saved page-windows", tot.ResidualSaved, tot.PredSaved)
	if tot.Decided == 0 || tot.Promotions == 0 || tot.Saved == 0 {
		t.Errorf("decided %d, promotions %d, saved %d: the test checks nothing", tot.Decided, tot.Promotions, tot.Saved)
	}
	if want != nil {
		checkSettings(t, rd.Rows, want)
	}
}

// checkSettings checks the run's setting column (rows) and switches
// against the simulator's controlled run.
func checkSettings(t *testing.T, rows []agent.Row, want *sim.Controlled) {
	t.Helper()
	switches := 0
	for w, r := range rows {
		if r.Setting != want.Settings[w] {
			t.Errorf("window %d: setting %s, the simulator's %s", w, r.Setting, want.Settings[w])
		}
		if r.Switched {
			switches++
		}
	}
	if switches != len(want.Switches) || switches == 0 {
		t.Errorf("%d switches in measured.csv, the simulator %d (none: the test exercises no feedback)", switches, len(want.Switches))
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
