//go:build linux

package cli

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"mdk/agent"
	"mdk/internal/testutil"
)

// TestAgentMaxPagesZero runs mdk agent --replay --max-pages 0: zero pages
// per window is zero, not "no limit": every decided page is skipped with
// cause limit and nothing is reclaimed.
func TestAgentMaxPagesZero(t *testing.T) {
	testutil.SetupZram(t, 128<<20)
	dir := t.TempDir()
	tr := filepath.Join(dir, "w.mdkt")
	if code, _, stderr := run(t, "", "gen", "--model", "zipf", "--pages", "2000", "--windows", "4", "--window", "1s", "-o", tr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	t.Setenv("MDK_CLI_AS_MDK", "1")
	runDir := filepath.Join(dir, "run")
	if code, _, stderr := run(t, "", "agent", "--replay", tr, "--policy", "age:A=1", "--window", "1s", "--psi", "0", "--log", "", "--max-pages", "0", "-o", runDir); code != 0 {
		t.Fatalf("agent: exit %d: %s", code, stderr)
	}
	f, err := os.Open(filepath.Join(runDir, agent.MeasuredFile))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := agent.ReadMeasured(f, agent.MeasuredFile)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var decided int64
	for _, r := range rows {
		decided += r.Decided
		if r.Reclaimed != 0 || r.SkippedLimit != r.Decided {
			t.Errorf("window %d: --max-pages 0 reclaimed %d, skipped %d of %d decided", r.Window, r.Reclaimed, r.SkippedLimit, r.Decided)
		}
	}
	if decided == 0 {
		t.Fatal("nothing decided: the test checks nothing")
	}
	// Run again into the same directory: refused, then replaced with --force.
	if code, _, stderr := run(t, "", "agent", "--replay", tr, "--policy", "age:A=1", "--window", "1s", "--psi", "0", "--log", "", "--dry-run", "-o", runDir); code != ExitError || !strings.Contains(stderr, "already holds a run") {
		t.Errorf("second run into %s: exit %d, %q", runDir, code, stderr)
	}
	if code, _, stderr := run(t, "", "agent", "--replay", tr, "--policy", "age:A=1", "--window", "1s", "--psi", "0", "--log", "", "--dry-run", "--force", "-o", runDir); code != 0 {
		t.Errorf("--force: exit %d, %q", code, stderr)
	}
	if code, out, stderr := run(t, "", "agent", "compare", runDir, "--format", "csv"); code != 0 || !strings.HasPrefix(out, "window,") {
		t.Errorf("compare of the replaced run: exit %d, %q", code, stderr)
	}
}

// TestAgentDryRunNonRoot runs mdk agent --replay --dry-run as an
// unprivileged user (nobody): a dry run never reclaims, so it must not ask
// for CAP_SYS_NICE, which process_madvise needs. The test binary is mdk
// (MDK_CLI_AS_MDK), copied where nobody can run it.
func TestAgentDryRunNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as nobody")
	}
	dir := t.TempDir()
	// t.TempDir is DIR/001 in a DIR of its own, both 0700.
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o777)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mdk")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		dst.Close()
	}
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(dir, "w.mdkt")
	if code, _, stderr := run(t, "", "gen", "--model", "zipf", "--pages", "500", "--windows", "3", "--window", "200ms", "-o", tr); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	os.Chmod(tr, 0o644)
	runDir := filepath.Join(dir, "run")
	cmd := exec.Command(bin, "agent", "--replay", tr, "--policy", "age:A=1", "--window", "200ms", "--psi", "0", "--log", "", "--dry-run", "-o", runDir)
	cmd.Env = append(os.Environ(), "MDK_CLI_AS_MDK=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dry run as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "mdk agent: 3 windows") {
		t.Errorf("dry run as nobody: %s", out)
	}
}
