//go:build linux

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/linux"
)

// TestAgentReplayCLI runs mdk gen, mdk agent --replay (on zram swap the test
// sets up), and mdk agent compare, in-process, the workload being this test
// binary as mdk: the agent's measurement equals the simulator's prediction.
func TestAgentReplayCLI(t *testing.T) {
	testutil.SetupZram(t, 128<<20)
	dir := t.TempDir()
	tr := filepath.Join(dir, "w.mdkt")
	if code, _, stderr := run(t, "", "gen", "--model", "zipf", "--pages", "2000", "--windows", "6", "--window", "1s", "-o", tr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	t.Setenv("MDK_CLI_AS_MDK", "1")
	runDir := filepath.Join(dir, "run")
	code, _, stderr := run(t, "", "agent", "--replay", tr, "--policy", "age:A=1", "--window", "1s", "--psi", "0", "--log", "", "-o", runDir)
	if code != 0 {
		t.Fatalf("agent: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "mdk agent: 6 windows") {
		t.Errorf("summary line missing: %q", stderr)
	}
	for _, f := range []string{"trace.mdkt", "measured.csv", "skipped.csv", "run.json"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	code, stdout, stderr := run(t, "", "agent", "compare", runDir, "--format", "json")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	c := readCompare(t, stdout)
	tot := c.TotalRaw
	if tot["decided"] == 0 || tot["decided"] != tot["pred_decided"] {
		t.Errorf("decided %d, the simulator %d", tot["decided"], tot["pred_decided"])
	}
	if tot["residual_promotions"] != 0 || tot["residual_saved"] != 0 {
		t.Errorf("unexplained differences: %v", tot)
	}
	if tot["refused"] == 0 && (c.Measured["promotions"] != c.Predicted["promotions"] || c.Measured["saved"] != c.Predicted["saved"]) {
		t.Errorf("no page refused, yet measured %v differs from predicted %v", c.Measured, c.Predicted)
	}
	// The memory as the kernel counts it: the workload's RSS in every
	// window, its swap and zram's memory where pages are out.
	if !c.Memory.Known || len(c.Memory.Windows) != 6 {
		t.Errorf("memory: %+v", c.Memory)
	}
	for _, m := range c.Memory.Windows {
		if m.RSS <= 0 || m.Net != m.RSS+m.Zram || m.Saved > 0 && (m.Swap <= 0 || m.Zram <= 0) {
			t.Errorf("window %d: rss %d, swap %d, zram %d, saved %d bytes: want rss, and swap and zram where pages are saved", m.Window, m.RSS, m.Swap, m.Zram, m.Saved)
		}
	}
	code, stdout, _ = run(t, "", "agent", "compare", runDir)
	if code != 0 || !strings.Contains(stdout, "windows fully explained (residual 0): 6 of 6") {
		t.Errorf("compare text: exit %d\n%s", code, stdout)
	}
	// The HTML report of the run directory has the agent's chart.
	html := filepath.Join(dir, "run.html")
	if code, _, stderr := run(t, "", "report", runDir, "--policy", "age:A=1", "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="chart-agent"`, `"agent":{"setting":"age:A=1"`, "Agent run: predicted and measured", "windows fully explained (residual 0): 6 of 6",
		`<table class="data small" id="agent-memory">`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// damonSysfs reads every file under DAMON's sysfs kdamonds directory that
// can be read: the state the refusal must leave untouched.
func damonSysfs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			out[p] = string(b)
		}
		return nil
	})
	return out
}

// TestAgentDamonRefusesBusyKdamond runs mdk agent --tracker damon on this
// host, where every kdamond belongs to someone else (or DAMON is missing):
// the agent refuses with a one-line error naming the cause, exit 1, writes
// no run directory and leaves DAMON's sysfs exactly as it was. Several pids,
// a cgroup or a replay with --tracker damon are usage errors.
func TestAgentDamonRefusesBusyKdamond(t *testing.T) {
	fsys := linux.NewFS("/proc", "/sys")
	if _, _, err := linux.ChooseKdamond(fsys); err == nil {
		t.Skip("a kdamond is free here: the refusal needs a busy one (or no DAMON)")
	}
	kds := filepath.Join(fsys.DamonAdmin(), "kdamonds")
	before := damonSysfs(t, kds)
	runDir := filepath.Join(t.TempDir(), "run")
	pid := strconv.Itoa(os.Getpid())
	code, _, stderr := run(t, "", "agent", "--pid", pid, "--tracker", "damon", "--policy", "age:A=1", "--window", "1s", "--dry-run", "--log", "", "-o", runDir)
	if code != 1 || !strings.Contains(stderr, "DAMON") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, want 1 with a one-line DAMON error: %q", code, stderr)
	}
	t.Logf("refusal: %s", strings.TrimSpace(stderr))
	if len(before) > 0 && !strings.Contains(stderr, "busy") {
		t.Errorf("the error does not say the kdamond is busy: %q", stderr)
	}
	if _, err := os.Stat(runDir); !os.IsNotExist(err) {
		t.Errorf("run directory written: %v", err)
	}
	after := damonSysfs(t, kds)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %q -> %q", p, v, after[p])
		}
	}
	if len(after) != len(before) {
		t.Errorf("DAMON sysfs: %d files before, %d after", len(before), len(after))
	}
	for _, args := range [][]string{
		{"--pid", pid, "--pid", "1"},
		{"--cgroup", "/sys/fs/cgroup"},
	} {
		args = append([]string{"agent", "--tracker", "damon", "--policy", "age:A=1", "--window", "1s", "--dry-run", "-o", runDir}, args...)
		if code, _, stderr := run(t, "", args...); code != 2 || !strings.Contains(stderr, "one --pid") {
			t.Errorf("%v: exit %d, want 2: %q", args, code, stderr)
		}
	}
	if code, _, stderr := run(t, "", "agent", "--pid", pid, "--tracker", "nope", "--policy", "age:A=1", "-o", runDir); code != 2 || !strings.Contains(stderr, "idle or damon") {
		t.Errorf("--tracker nope: exit %d: %q", code, stderr)
	}
}
