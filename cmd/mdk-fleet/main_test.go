package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mdk/gen"
	"mdk/trace"
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

// TestFleetSplit runs mdk-fleet --split on a partitioned trace (mdk
// convert --partitions) and wants the files of the same trace run whole
// (--split 1), byte for byte; a negative --split is refused.
func TestFleetSplit(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "mdk-fleet")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfg := gen.DefaultConfig
	cfg.Pages, cfg.Windows = 3000, 40
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriter(&buf, tr.Header, trace.Partitioning{Count: 16, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trace.Copy(w, tr.NewReader()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "p16.mdkt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(split string) string {
		out := filepath.Join(dir, "out"+split)
		cmd := exec.Command(bin, path, "-p", "age", "-p", "opp", "--slo", "max_pr<=2%", "-o", out, "--split", split)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mdk-fleet --split %s: %v\n%s", split, err, b)
		}
		return out
	}
	whole, split := run("1"), run("3")
	for _, name := range []string{"curves.csv", "jobs.json", "settings.csv", "summary.txt"} {
		a, err1 := os.ReadFile(filepath.Join(whole, name))
		b, err2 := os.ReadFile(filepath.Join(split, name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: --split 3 and --split 1 differ (%v, %v)", name, err1, err2)
		}
	}
	err = exec.Command(bin, path, "-o", filepath.Join(dir, "bad"), "--split", "-1").Run()
	if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() != 2 {
		t.Errorf("--split -1: %v, want exit status 2", err)
	}
}
