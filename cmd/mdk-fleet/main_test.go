package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFleetCommandLine builds mdk-fleet and runs it with mdk fleet's own
// command line (arguments before flags, -p, -o, --workers) on prism: it must
// accept it, print the summary, and keep Beam's INFO logs off stderr. And
// --help-beam lists Beam's flags, which --help does not.
func TestFleetCommandLine(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "mdk-fleet")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ex, err := os.ReadFile("../../testdata/example.txt")
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, n := range []string{"a.txt", "b.txt"} {
		p := filepath.Join(dir, n)
		os.WriteFile(p, ex, 0o644)
		jobs = append(jobs, p)
	}
	args := append(jobs, "-p", "vmin:T=0", "--slo", "max_pr<=40%", "-o", filepath.Join(dir, "out"), "--workers", "2")
	cmd := exec.Command(bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mdk-fleet %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "2 jobs, 0 failed") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	if strings.Contains(stderr.String(), "INFO") {
		t.Errorf("Beam's INFO logs on stderr:\n%.2000s", stderr.String())
	}
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	beamHelp, _ := exec.Command(bin, "--help-beam").CombinedOutput()
	if strings.Contains(string(help), "-async") || !strings.Contains(string(beamHelp), "-async") || strings.Count(string(help), "\n") > 30 {
		t.Errorf("--help:\n%s\n--help-beam:\n%.500s", help, beamHelp)
	}
}
