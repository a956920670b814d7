package collect

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdk/internal/vmtest"
	"mdk/internal/vmtest/workload"
)

const (
	schedSeed   = 12
	schedPages  = 2048
	schedPhases = 8
	idleWindow  = time.Second
)

// arenaOf parses the workload's ready line: arena start (hex bytes), pages.
func arenaOf(t *testing.T, w *wl) (uint64, int) {
	t.Helper()
	start, err1 := strconv.ParseUint(w.ready[0], 16, 64)
	n, err2 := strconv.Atoi(w.ready[1])
	if err1 != nil || err2 != nil {
		t.Fatalf("ready line %v", w.ready)
	}
	return start / 4096, n
}

// recordSchedule records the schedule workload with mdk record (target
// flags from target, which gets the workload's pid) and returns the arena
// windows and the recorder's log.
func recordSchedule(t *testing.T, window time.Duration, repeat time.Duration, target func(pid int) []string, extra ...string) ([]arenaWindow, string) {
	return recordBlockSchedule(t, 1, window, repeat, target, extra...)
}

// recordBlockSchedule is recordSchedule on NewBlockSchedule(..., block).
func recordBlockSchedule(t *testing.T, block int, window time.Duration, repeat time.Duration, target func(pid int) []string, extra ...string) ([]arenaWindow, string) {
	t.Helper()
	w := startWorkload(t, "schedule", strconv.Itoa(schedSeed), strconv.Itoa(schedPages), strconv.Itoa(schedPhases), strconv.Itoa(block))
	first, n := arenaOf(t, w)
	out := filepath.Join(t.TempDir(), "rec.mdkt")
	args := append(target(w.cmd.Process.Pid), "--window", window.String(),
		"--duration", (schedPhases * window).String(), "-o", out)
	r := startRecord(t, append(args, extra...)...)
	log := driveSchedule(t, w, r, schedPhases, repeat)
	_, wins := arenaWindows(t, out, first, n)
	if keep := os.Getenv("MDK_VMTEST_KEEP"); keep != "" {
		writeArenaTrace(t, filepath.Join(keep, t.Name()+".txt"), wins)
	}
	return wins, log
}

// TestGuestRecordPid: mdk record --pid on the custom kernel's real idle
// page tracking gives the workload's schedule, up to the LRU-batch slack.
func TestGuestRecordPid(t *testing.T) {
	guestKind(t, vmtest.Custom)
	mglruOff(t)
	wins, log := recordSchedule(t, idleWindow, 0, func(pid int) []string { return []string{"--pid", strconv.Itoa(pid)} })
	slack := checkSchedule(t, workload.NewSchedule(schedSeed, schedPages, schedPhases), wins)
	t.Logf("--pid: slack per window (untouched pages seen accessed): %v", slack)
	if strings.Contains(log, "warning") {
		t.Errorf("unexpected warning:\n%s", log)
	}
}

// TestGuestRecordCgroup: the same through --cgroup, the workload moved into
// a fresh cgroup v2 group.
func TestGuestRecordCgroup(t *testing.T) {
	guestKind(t, vmtest.Custom)
	mglruOff(t)
	cg := makeCgroup(t, "mdk-sched")
	wins, _ := recordSchedule(t, idleWindow, 0, func(pid int) []string {
		if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			t.Fatal(err)
		}
		return []string{"--cgroup", cg}
	})
	slack := checkSchedule(t, workload.NewSchedule(schedSeed, schedPages, schedPhases), wins)
	t.Logf("--cgroup: slack per window: %v", slack)
}

func makeCgroup(t *testing.T, name string) string {
	t.Helper()
	cg := filepath.Join("/sys/fs/cgroup", name)
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// move what is left back to the root, then remove the group
		if b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs")); err == nil {
			for _, p := range strings.Fields(string(b)) {
				os.WriteFile("/sys/fs/cgroup/cgroup.procs", []byte(p), 0)
			}
		}
		os.Remove(cg)
	})
	return cg
}

// TestGuestErrors: a missing kernel feature gets its one-line error (exit
// status 1) from mdk record on the real kernels.
func TestGuestErrors(t *testing.T) {
	kind := guestKind(t)
	run := func(args ...string) (string, int) {
		c := exec.Command("/work/mdk", append([]string{"record"}, args...)...)
		out, _ := c.CombinedOutput()
		return strings.TrimSpace(string(out)), c.ProcessState.ExitCode()
	}
	self := strconv.Itoa(os.Getpid())
	out := filepath.Join(t.TempDir(), "x.mdkt")
	msg, code := run("--pid", self, "--duration", "1s", "--window", "1s", "-o", out)
	switch kind {
	case vmtest.Stock:
		if code != 1 || !strings.Contains(msg, "no idle page tracking: /sys/kernel/mm/page_idle/bitmap is missing") || strings.Count(msg, "\n") != 0 {
			t.Errorf("stock kernel, --tracker idle: exit %d, %q; want 1 and the one-line idle tracking error", code, msg)
		}
	case vmtest.Custom:
		if code != 0 {
			t.Errorf("custom kernel, --tracker idle: exit %d, %q", code, msg)
		}
	}
	msg, code = run("--pid", "999999", "-o", out)
	if code != 1 || !strings.Contains(msg, "no such process: 999999") {
		t.Errorf("--pid 999999: exit %d, %q", code, msg)
	}
	// The recorder is not root-only by accident: without CAP_SYS_ADMIN the
	// kernel hides PFNs, which the recorder names.
	t.Logf("%s kernel: errors checked", kind)
}

// TestGuestRecorderCost measures the recorder on the real kernel: the scan
// of a process with 131,072 present pages (512 MiB), as reported by mdk
// record itself (wall time and CPU time per scan). The guest runs under TCG
// emulation, so absolute times are those of an emulated CPU.
func TestGuestRecorderCost(t *testing.T) {
	guestKind(t, vmtest.Custom)
	mglruOff(t)
	const pages = 131072
	w := startWorkload(t, "schedule", "1", strconv.Itoa(pages), "2")
	_ = w
	out := filepath.Join(t.TempDir(), "cost.mdkt")
	r := startRecord(t, "--pid", strconv.Itoa(w.cmd.Process.Pid), "--window", "5s", "--duration", "15s", "-o", out)
	log := r.wait(t)
	var scans []string
	for _, l := range strings.Split(log, "\n") {
		if m := windowLine.FindStringSubmatch(l); m != nil {
			scans = append(scans, fmt.Sprintf("scan %s CPU %s pages %s", m[2], m[3], m[4]))
		}
	}
	i := strings.Index(log, "recorder cost over")
	if i < 0 || len(scans) < 3 {
		t.Fatalf("no cost summary in the log:\n%s", log)
	}
	t.Logf("recorder cost, %d-page arena (half faulted in) under TCG: %v; %s", pages, scans, strings.TrimSpace(log[i:]))
}
