package collect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/internal/testutil"
	"mdk/trace"

	"mdk/linux"
)

// events returns, per window, the sorted events of t as "a 0/0x400".
func events(t *trace.Trace) [][]string {
	out := make([][]string, len(t.Windows))
	for i, w := range t.Windows {
		add := func(kind string, ids []uint32) {
			for _, id := range ids {
				p := t.Pages[id]
				out[i] = append(out[i], fmt.Sprintf("%s %d/%#x", kind, p.Space, p.Page))
			}
		}
		add("a", w.Accessed)
		add("b", w.Born)
		add("f", w.Freed)
		slices.Sort(out[i])
	}
	return out
}

func ev(kind string, space int, pages ...uint64) []string {
	var s []string
	for _, p := range pages {
		s = append(s, fmt.Sprintf("%s %d/%#x", kind, space, p))
	}
	return s
}

func cat(lists ...[]string) []string {
	var s []string
	for _, l := range lists {
		s = append(s, l...)
	}
	slices.Sort(s)
	return s
}

// TestRecorderFakeKernel records two processes on the fake kernel for five
// windows; between scans the fake kernel plays a script of accesses, faults,
// unmaps, swaps, a migration, a copy-on-write and an exit. The trace read
// back from the file must hold exactly the events the script implies.
func TestRecorderFakeKernel(t *testing.T) {
	k, tr, sum, want, log := recordFake(t, trace.Sample{})
	if sum.Windows != 5 || sum.Reason != "duration reached" {
		t.Errorf("summary: %d windows, reason %q", sum.Windows, sum.Reason)
	}
	if d := cmp.Diff(want, events(tr)); d != "" {
		t.Errorf("trace (-want +got):\n%s", d)
	}
	h := tr.Header
	if h.Window != 20*time.Millisecond || h.PageSize != 4096 || h.Sample != (trace.Sample{}) {
		t.Errorf("header %+v", h)
	}
	for _, s := range []string{"space = pid index in order first seen: 0=100 1=200", "recorder cost over 6 scans", "stopped: duration reached"} {
		if !strings.Contains(h.Source, s) {
			t.Errorf("source %q lacks %q", h.Source, s)
		}
	}
	if !strings.Contains(log, "window 4: 0 accessed, 1 born, 0 freed;") {
		t.Errorf("log lacks window 4's line:\n%s", log)
	}
	if k.reads == 0 || k.writes == 0 {
		t.Errorf("bitmap reads %d, writes %d", k.reads, k.writes)
	}
}

// TestRecorderSampled: with a sample, the recorder scans and records only
// the pages it keeps: the trace is the whole recording's events of those
// pages, its header says it is sampled, and fewer pages are scanned.
func TestRecorderSampled(t *testing.T) {
	_, full, fsum, _, _ := recordFake(t, trace.Sample{})
	for _, seed := range []uint64{1, 2, 3} {
		s := trace.Sample{PPM: 500000, Seed: seed}
		_, tr, sum, _, _ := recordFake(t, s)
		var want [][]string
		for _, w := range events(full) {
			var kept []string
			for _, e := range w {
				var kind string
				var space uint32
				var page uint64
				fmt.Sscanf(e, "%s %d/%v", &kind, &space, &page)
				if s.Keep(trace.Page{Space: space, Page: page}) {
					kept = append(kept, e)
				}
			}
			want = append(want, kept)
		}
		n, nfull := 0, 0
		for w := range want {
			n, nfull = n+len(want[w]), nfull+len(events(full)[w])
		}
		if n == 0 || n == nfull {
			t.Fatalf("seed %d: %d of %d events kept: the test needs some of each", seed, n, nfull)
		}
		if d := cmp.Diff(want, events(tr), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("seed %d: trace (-full, filtered +sampled):\n%s", seed, d)
		}
		if tr.Header.Sample != s || !strings.Contains(tr.Header.Source, "sampled: 50% seed") {
			t.Errorf("seed %d: header %+v", seed, tr.Header)
		}
		if sum.Total.Pages >= fsum.Total.Pages {
			t.Errorf("seed %d: %d pages scanned, the whole recording %d", seed, sum.Total.Pages, fsum.Total.Pages)
		}
	}
}

// recordFake records two processes on the fake kernel for five windows
// while it plays its script, and returns the trace read back from the file
// and the events the script implies for the whole recording.
func recordFake(t *testing.T, sample trace.Sample) (*fakeKernel, *trace.Trace, Summary, [][]string, string) {
	t.Helper()
	return recordFakeParts(t, sample, 0, nil)
}

// recordFakeParts is recordFake writing a trace of parts partitions (0:
// none), calling after(scan, out) after each scan of the recording to out.
func recordFakeParts(t *testing.T, sample trace.Sample, parts int, after func(scan int, out string)) (*fakeKernel, *trace.Trace, Summary, [][]string, string) {
	t.Helper()
	k := newFakeKernel(t, 1<<20)
	k.spawn(100)
	k.mmap(100, 0x400, 4, "/usr/bin/app", 0x400, 0x401, 0x402, 0x403)
	k.mmap(100, 0x1000, 8, "[heap]", 0x1000, 0x1001, 0x1002, 0x1003)
	k.mmap(100, 0x7000, 1, "[vdso]", 0x7000) // kernel pages: never recorded
	k.spawn(200)
	k.mmap(200, 0x400, 2, "", 0x400, 0x401)

	script := []func(){
		0: func() {
			k.touch(100, 0x400, 0x1001)
			k.touch(200, 0x400)
			k.touch(100, 0x1004) // fault in: a page appears, its first access unseen
			k.touch(100, 0x7000)
		},
		1: func() {
			k.touch(100, 0x401, 0x1004)
			k.swapOut(100, 0x402)
			k.zap(100, 0x1003)
			k.migrate(100, 0x1002) // not accessed: the idle flag moves with it
		},
		2: func() {
			k.touch(100, 0x402) // swap-in: an access
			k.cow(100, 0x403)   // a write to a shared page: an access
			k.exit(200)
		},
		3: func() {
			k.munmap(100, 0x400) // 0x400-0x403
			k.touch(100, 0x1000, 0x1000)
		},
		4: func() {
			k.mmap(100, 0x400, 1, "", 0x400) // a new life for 0/0x400
		},
	}
	want := [][]string{
		0: cat(ev("b", 0, 0x400, 0x401, 0x402, 0x403, 0x1000, 0x1001, 0x1002, 0x1003, 0x1004),
			ev("b", 1, 0x400, 0x401),
			ev("a", 0, 0x400, 0x1001), ev("a", 1, 0x400)),
		1: cat(ev("a", 0, 0x401, 0x1004), ev("f", 0, 0x1003)),
		2: cat(ev("a", 0, 0x402, 0x403), ev("f", 1, 0x400, 0x401)),
		3: cat(ev("a", 0, 0x1000), ev("f", 0, 0x400, 0x401, 0x402, 0x403)),
		4: cat(ev("b", 0, 0x400)),
	}

	var log strings.Builder
	const window = 20 * time.Millisecond
	out := filepath.Join(t.TempDir(), "rec.mdkt")
	r, err := NewRecorder(Options{
		FS: k.FS(), PIDs: []int{100, 200}, Window: window, Duration: 5 * window, Log: &log, Sample: sample,
		Partitions: parts,
		AfterScan: func(scan int) {
			if scan < len(script) {
				script[scan]()
			}
			if after != nil {
				after(scan, out)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sum, err := r.RecordFile(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	tr := testutil.ReadTraceFile(t, out)
	return k, tr, sum, want, log.String()
}

// TestRecorderCgroup follows a cgroup whose processes come and go, and
// stops when the cgroup is removed.
func TestRecorderCgroup(t *testing.T) {
	k := newFakeKernel(t, 1<<16)
	cg := filepath.Join(k.sys, "fs/cgroup/app.slice")
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	setProcs := func(pids ...int) {
		var s strings.Builder
		for _, p := range pids {
			fmt.Fprintln(&s, p)
		}
		if err := os.WriteFile(filepath.Join(cg, "cgroup.procs"), []byte(s.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k.spawn(300)
	k.mmap(300, 0x10, 2, "", 0x10, 0x11)
	setProcs(300)
	script := []func(){
		0: func() {
			k.spawn(301)
			k.mmap(301, 0x20, 1, "", 0x20)
			setProcs(300, 301)
			k.touch(300, 0x11)
		},
		1: func() {
			k.exit(300)
			setProcs(301)
		},
		2: func() {
			k.touch(301, 0x20)
			if err := os.RemoveAll(cg); err != nil {
				t.Fatal(err)
			}
		},
	}
	want := [][]string{
		0: cat(ev("b", 0, 0x10, 0x11), ev("a", 0, 0x11), ev("b", 1, 0x20)),
		1: cat(ev("f", 0, 0x10, 0x11)),
		2: cat(ev("f", 1, 0x20)), // the cgroup is gone: its pages end with it
	}
	r, err := NewRecorder(Options{
		FS: k.FS(), Cgroup: "/sys/fs/cgroup/app.slice", Window: 10 * time.Millisecond,
		AfterScan: func(scan int) {
			if scan < len(script) {
				script[scan]()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "cg.mdkt")
	sum, err := r.RecordFile(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reason != "the targets exited" || !slices.Equal(sum.Spaces, []int{300, 301}) {
		t.Errorf("summary %+v", sum)
	}
	tr := testutil.ReadTraceFile(t, out)
	if d := cmp.Diff(want, events(tr)); d != "" {
		t.Errorf("trace (-want +got):\n%s", d)
	}
}

// TestRecorderCancel checks that ending the context mid-window closes a
// readable trace holding the completed windows.
func TestRecorderCancel(t *testing.T) {
	k := newFakeKernel(t, 1<<16)
	k.spawn(100)
	k.mmap(100, 0x10, 1, "", 0x10)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := NewRecorder(Options{
		FS: k.FS(), PIDs: []int{100}, Window: 10 * time.Millisecond,
		AfterScan: func(scan int) {
			k.touch(100, 0x10)
			if scan == 3 {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "c.txt")
	sum, err := r.RecordFile(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Windows != 3 || sum.Reason != "interrupted" {
		t.Errorf("summary %+v", sum)
	}
	tr := testutil.ReadTraceFile(t, out)
	want := [][]string{cat(ev("a", 0, 0x10), ev("b", 0, 0x10)), ev("a", 0, 0x10), ev("a", 0, 0x10)}
	if d := cmp.Diff(want, events(tr)); d != "" {
		t.Errorf("trace (-want +got):\n%s", d)
	}
}

func TestRecorderErrors(t *testing.T) {
	k := newFakeKernel(t, 1<<16)
	k.spawn(100)
	k.mmap(100, 0x10, 1, "", 0x10)

	noIdle := linux.NewFS(k.proc, t.TempDir())
	tests := []struct {
		name string
		opt  Options
		is   error
		want string
	}{
		{"no such process", Options{FS: k.FS(), PIDs: []int{999}, Window: time.Second}, linux.ErrNoProcess, "no such process: 999"},
		{"no idle tracking", Options{FS: noIdle, PIDs: []int{100}, Window: time.Second}, linux.ErrNoIdleTrack, "record on a kernel with it, or use --exact"},
		{"no cgroup", Options{FS: k.FS(), Cgroup: "nope", Window: time.Second}, os.ErrNotExist, "cgroup nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRecorder(tc.opt)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %v containing %q", err, tc.is, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}

	t.Run("no PFNs", func(t *testing.T) {
		// Without CAP_SYS_ADMIN the kernel zeroes the PFN field.
		k.mu.Lock()
		k.procs[100].pme[0x10] = linux.PagemapPresent
		k.sync(100)
		k.mu.Unlock()
		r, err := NewRecorder(Options{FS: k.FS(), PIDs: []int{100}, Window: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, err = r.RecordFile(context.Background(), filepath.Join(t.TempDir(), "x.mdkt"))
		if !errors.Is(err, linux.ErrPermission) || !strings.Contains(err.Error(), "run as root") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestMGLRUWarning(t *testing.T) {
	k := newFakeKernel(t, 1<<16)
	k.spawn(100)
	for _, tc := range []struct {
		content string
		warn    bool
	}{{"0x0007\n", true}, {"0x0000\n", false}, {"y\n", true}} {
		dir := filepath.Join(k.sys, "kernel/mm/lru_gen")
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "enabled"), []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		r, err := NewRecorder(Options{FS: k.FS(), PIDs: []int{100}, Window: time.Second, Log: &log})
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		got := strings.Contains(log.String(), "echo n > /sys/kernel/mm/lru_gen/enabled")
		if got != tc.warn {
			t.Errorf("lru_gen %q: warned %v, want %v: %q", tc.content, got, tc.warn, log.String())
		}
	}
}

// TestRecorderPartialLastWord: on the real kernel (seen in the test guest,
// whose 1 GiB ends at frame 0x3ffe0), frames in the partial last 64-frame
// word of the idle bitmap are marked by writes but their bits are never
// returned by reads. The recorder keeps recording: those pages read as
// accessed, with one warning; the others are judged as usual.
func TestRecorderPartialLastWord(t *testing.T) {
	const maxPFN = 1<<16 - 32
	k := newFakeKernel(t, maxPFN)
	k.spawn(100)
	k.mmap(100, 0x400, 1, "", 0x400) // an ordinary frame
	k.nextPFN = maxPFN - 10          // the next frame is in the partial word
	k.mmap(100, 0x500, 1, "", 0x500)
	var log strings.Builder
	r, err := NewRecorder(Options{FS: k.FS(), PIDs: []int{100}, Window: time.Millisecond, Duration: 3 * time.Millisecond, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "rec.mdkt")
	if _, err := r.RecordFile(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	tr := testutil.ReadTraceFile(t, out)
	want := [][]string{
		0: cat(ev("b", 0, 0x400, 0x500), ev("a", 0, 0x500)),
		1: ev("a", 0, 0x500),
		2: ev("a", 0, 0x500),
	}
	if diff := cmp.Diff(want, events(tr)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if n := strings.Count(log.String(), "partial last idle-bitmap word"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, log.String())
	}
}
