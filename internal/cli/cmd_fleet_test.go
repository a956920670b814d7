package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mdk/internal/testutil"
)

// TestFleetCLI runs mdk fleet on two copies of SPEC section 4's trace and a
// missing one. By the SPEC table, vmin:T=0 saves S = 32 of L = 51
// page-windows per copy over W = 10 windows of 4096-byte pages: on average
// 32*4096/10 bytes each, and breaks max_pr<=40% (its max_pr is 0.5).
func TestFleetCLI(t *testing.T) {
	dir := t.TempDir()
	ex, _ := os.ReadFile("../../testdata/example.txt")
	for _, n := range []string{"a.txt", "b.txt"} {
		os.WriteFile(filepath.Join(dir, n), ex, 0o666)
	}
	list := filepath.Join(dir, "jobs.txt")
	os.WriteFile(list, []byte(filepath.Join(dir, "a.txt")+"\n"+filepath.Join(dir, "b.txt")+"\n"+filepath.Join(dir, "gone.txt")+"\n"), 0o666)
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"fleet", list, "-p", "vmin:T=0", "--slo", "max_pr<=40%", "-o", out}, strings.NewReader(""), &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "3 jobs, 1 failed") {
		t.Errorf("summary: %s", stdout.String())
	}
	settings, _ := os.ReadFile(filepath.Join(out, "settings.csv"))
	// policy,params,footprint_bytes,saved_page_windows,jobs,avg_saved_bytes,...,breaking_jobs,breaking_share
	if !strings.Contains(string(settings), "\nvmin,T=0,") || !strings.Contains(string(settings), ",64,2,26214.4,") || !strings.Contains(string(settings), ",2,1,") {
		t.Errorf("settings.csv:\n%s", settings)
	}
	if code := Run(context.Background(), []string{"fleet", list, "-p", "bogus", "-o", out}, strings.NewReader(""), &stdout, &stderr); code != ExitUsage {
		t.Errorf("bad policy: exit %d, want %d", code, ExitUsage)
	}
}

// TestNoBeamInMDK checks that the core binary does not link Apache Beam.
func TestNoBeamInMDK(t *testing.T) {
	gotool := testutil.RequireTool(t, "go")
	out, err := exec.Command(gotool, "list", "-deps", "mdk/cmd/mdk").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "apache/beam") {
		t.Errorf("mdk/cmd/mdk depends on Apache Beam")
	}
}

// TestFleetSummaryWhenNoneMeets checks the summary's words when no setting
// meets the SLO on any job (vmin:T=0's max_pr on SPEC section 4's trace is
// 0.5): tuned per job says "none meets the SLO" rather than 0.00% with 0
// breaking, and the one setting for all says plainly that it breaks every
// job rather than reading as a result next to OPP.
func TestFleetSummaryWhenNoneMeets(t *testing.T) {
	dir := t.TempDir()
	ex, _ := os.ReadFile("../../testdata/example.txt")
	var jobs []string
	for _, n := range []string{"a.txt", "b.txt"} {
		os.WriteFile(filepath.Join(dir, n), ex, 0o666)
		jobs = append(jobs, filepath.Join(dir, n))
	}
	code, out, errs := run(t, "", append([]string{"fleet"}, append(jobs, "-p", "vmin:T=0", "--slo", "max_pr<=40%", "-o", filepath.Join(dir, "out"))...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "none meets the SLO") || !strings.Contains(out, "BREAKS ALL 2 jobs") || strings.Contains(out, "0 breaking") {
		t.Errorf("summary:\n%s", out)
	}
}
