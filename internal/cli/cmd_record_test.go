package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/linux"
	"mdk/trace"
)

// TestRecordFakeTree runs `mdk record` on a static fake /proc and /sys: one
// process with three present pages that nothing touches. Every page is born
// in window 0 and never accessed (the bitmap is a plain file, so the marks
// stay set).
func TestRecordFakeTree(t *testing.T) {
	root, proc, sys := fakeRecordTree(t)
	out := filepath.Join(root, "t.txt")
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"record", "--proc", proc, "--sys", sys, "--pid", "42",
		"--window", "10ms", "--duration", "30ms", "-o", out}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReaderAuto(bytes.NewReader(b), out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Windows) != 3 || len(tr.Windows[0].Born) != 3 || len(tr.Pages) != 3 {
		t.Errorf("trace:\n%s", b)
	}
	for _, w := range tr.Windows {
		if len(w.Accessed)+len(w.Freed) != 0 {
			t.Errorf("window %d has accesses or frees:\n%s", w.Index, b)
		}
	}
	if !strings.Contains(stderr.String(), "window 2: 0 accessed, 0 born, 0 freed") || !strings.Contains(string(b), "0=42") {
		t.Errorf("stderr:\n%s\ntrace:\n%s", stderr.String(), b)
	}
}

// fakeRecordTree makes TestRecordFakeTree's /proc and /sys under a
// temporary root: process 42 with three present pages of four.
func fakeRecordTree(t *testing.T) (root, proc, sys string) {
	root = t.TempDir()
	proc, sys = filepath.Join(root, "proc"), filepath.Join(root, "sys")
	os.MkdirAll(filepath.Join(proc, "42"), 0o755)
	os.MkdirAll(filepath.Join(sys, "kernel/mm/page_idle"), 0o755)
	os.WriteFile(filepath.Join(proc, "42/maps"), []byte("00010000-00014000 rw-p 00000000 00:00 0  [heap]\n"), 0o644)
	pm := make([]byte, 0x14*8)
	for i, pfn := range []uint64{0x100, 0x101, 0x2345} {
		binary.NativeEndian.PutUint64(pm[(0x10+i)*8:], linux.PagemapPresent|pfn)
	}
	os.WriteFile(filepath.Join(proc, "42/pagemap"), pm, 0o644)
	os.WriteFile(filepath.Join(sys, "kernel/mm/page_idle/bitmap"), make([]byte, 0x4000/8), 0o644)
	return root, proc, sys
}

// TestRecordSamplePartitioned: mdk record --sample into a .mdkt file
// writes a partitioned trace (version 5, 10 partitions by the sample's
// seed, cut as trace.DefaultCuts) unless --partitions says otherwise; a
// text file cannot be.
func TestRecordSamplePartitioned(t *testing.T) {
	root, proc, sys := fakeRecordTree(t)
	for _, tc := range []struct {
		args    []string
		version byte
		parts   trace.Partitioning
	}{
		{[]string{"--sample", "50%", "--sample-seed", "3"}, trace.BinaryPartitionedVersion, trace.Partitioning{Count: 10, Seed: 3, Cuts: trace.DefaultCuts(10, 500000)}},
		{[]string{"--sample", "50%", "--partitions", "4"}, trace.BinaryPartitionedVersion, trace.Partitioning{Count: 4, Seed: 1, Cuts: trace.DefaultCuts(4, 500000)}},
		{[]string{"--sample", "50%", "--partitions", "0"}, trace.BinarySampledVersion, trace.Partitioning{}},
		{[]string{"--partitions", "2"}, trace.BinaryPartitionedVersion, trace.Partitioning{Count: 2, Seed: trace.DefaultPartitionSeed, Cuts: []uint32{0, 500000, 1000000}}},
		{nil, trace.BinaryVersion, trace.Partitioning{}},
	} {
		out := filepath.Join(root, "t.mdkt")
		var stderr bytes.Buffer
		args := append([]string{"record", "--proc", proc, "--sys", sys, "--pid", "42", "--window", "10ms", "--duration", "30ms", "-o", out}, tc.args...)
		if code := Run(context.Background(), args, nil, &bytes.Buffer{}, &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if b[8] != tc.version {
			t.Errorf("%q: version %d, want %d", tc.args, b[8], tc.version)
		}
		r, err := trace.NewReaderAuto(bytes.NewReader(b), out)
		if err != nil {
			t.Fatal(err)
		}
		var got trace.Partitioning
		if pr, ok := r.(trace.PartitionedReader); ok {
			got = pr.Partitioning()
		}
		if !got.Equal(tc.parts) {
			t.Errorf("%q: partitions %+v, want %+v", tc.args, got, tc.parts)
		}
		if _, err := trace.ReadAll(r); err != nil {
			t.Errorf("%q: %v", tc.args, err)
		}
	}
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"record", "--proc", proc, "--sys", sys, "--pid", "42", "--sample", "50%", "--partitions", "3", "-o", filepath.Join(root, "t.txt")}, nil, &bytes.Buffer{}, &stderr)
	if code != ExitUsage || !strings.Contains(stderr.String(), "only the binary format is partitioned") {
		t.Errorf("--partitions into a text file: exit %d, %s", code, stderr.String())
	}
}

func TestRecordErrors(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"record", "-o", "x.mdkt"}, ExitUsage, "give --pid"},
		{[]string{"record", "--pid", "1", "-o", "x.bad"}, ExitUsage, "extension"},
		{[]string{"record", "--pid", "1", "--proc", empty, "-o", "x.mdkt"}, ExitError, "no such process: 1"},
		{[]string{"record", "--pid", "1", "--sys", empty, "-o", "x.mdkt"}, ExitError, "record on a kernel with it, or use --exact"},
		{[]string{"record", "--exact", "-o", "x.mdkt"}, ExitUsage, "needs a program"},
		{[]string{"record", "--exact", "--valgrind", "no-such-valgrind", "-o", filepath.Join(empty, "x.mdkt"), "--", "true"}, ExitError, "install the Debian package valgrind"},
		{[]string{"record", "--exact", "--tracer", "qemu", "-o", filepath.Join(empty, "x.mdkt"), "--", "true"}, ExitUsage, "--tracer must be auto, pages or lackey"},
	}
	for _, tc := range tests {
		var stderr bytes.Buffer
		code := Run(context.Background(), tc.args, nil, &bytes.Buffer{}, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and one line containing %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func TestRecordExact(t *testing.T) {
	testutil.RequireTool(t, "valgrind")
	for _, tracer := range []string{"pages", "lackey"} {
		t.Run(tracer, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "echo.mdkt")
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), []string{"record", "--exact", "--tracer", tracer, "--window-instructions", "50000", "-o", out, "--", "/bin/echo", "hello"}, nil, &stdout, &stderr)
			if code != 0 || stdout.String() != "hello\n" || !strings.Contains(stderr.String(), "("+tracer+", ") {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout.String(), stderr.String())
			}
			r, c, err := trace.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tr, err := trace.ReadAll(r)
			if err != nil || len(tr.Windows) < 2 {
				t.Fatalf("%d windows, %v", len(tr.Windows), err)
			}
		})
	}
}

// TestRecordTrackerFlags: the --tracker and --pages combinations that
// cannot work are usage errors (exit status 2) naming the flag; DAMON on a
// sys tree without it is a one-line error (exit status 1).
func TestRecordTrackerFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "t.mdkt")
	self := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--pid", self, "--tracker", "dam"}, 2, `--tracker must be idle or damon, got "dam"`},
		{[]string{"--pid", self, "--pages", "phys"}, 2, `--pages must be virtual or physical, got "phys"`},
		{[]string{"--pid", self, "--pid", "1", "--tracker", "damon"}, 2, "--tracker damon records one process"},
		{[]string{"--cgroup", "x", "--tracker", "damon"}, 2, "--tracker damon records one process"},
		{[]string{"--pid", self, "--tracker", "damon", "--pages", "physical"}, 2, "--pages physical needs --tracker idle"},
		{[]string{"--pid", self, "--tracker", "damon", "--sys", t.TempDir()}, 1, "no DAMON: "},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append(append([]string{"record"}, tc.args...), "-o", out), nil, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.msg)
		}
	}
}
