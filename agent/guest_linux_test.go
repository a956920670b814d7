//go:build linux

package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mdk/collect"
	"mdk/internal/testutil"
	"mdk/internal/vmtest"
	"mdk/policy"
	"mdk/workload"
)

// TestAgentInGuest boots the custom kernel (idle page tracking, zram) and
// runs TestGuestAgentLive there.
func TestAgentInGuest(t *testing.T) {
	if _, in := vmtest.InGuest(); in {
		t.Skip("the host side")
	}
	kernel := vmtest.Kernel(t, vmtest.Custom)
	bin := vmtest.BuildTest(t, "mdk/agent")
	vmtest.RunTest(t, vmtest.GuestTest{
		Kernel: kernel, Kind: vmtest.Custom, Binary: bin, Run: "^TestGuestAgentLive$",
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
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), "MDK_TEST_WORKLOAD="+path, "MDK_TEST_CLOCK="+window.String())
			cmd.Stderr = os.Stderr
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { in.Close(); cmd.Wait() }()
			rd := bufio.NewReader(out)
			line, err := rd.ReadBytes('\n')
			var hello workload.Hello
			if err == nil {
				err = json.Unmarshal(line, &hello)
			}
			if err != nil {
				t.Fatalf("workload: %v", err)
			}
			go io.Copy(io.Discard, rd)
			it, err := NewIdle(collect.NewFS("/proc", "/sys"), []int{hello.PID}, window)
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
