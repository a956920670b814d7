package collect

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mdk/internal/vmtest"
	"mdk/internal/vmtest/workload"
	"mdk/trace"
)

// TestVM boots the custom and the stock Debian 13 kernel in QEMU guests and
// runs this package's guest-side tests (TestGuest*) there, with the mdk
// binary and the workload program: recording on real kernels.
func TestVM(t *testing.T) {
	kernels := map[vmtest.KernelKind]string{}
	for _, kind := range []vmtest.KernelKind{vmtest.Custom, vmtest.Stock} {
		t.Run(string(kind)+"-kernel", func(t *testing.T) { kernels[kind] = vmtest.Kernel(t, kind) })
	}
	if len(kernels) == 0 {
		return
	}
	files := map[string]string{
		"/work/mdk":          vmtest.BuildGo(t, "mdk/cmd/mdk"),
		"/work/mdk-workload": vmtest.BuildGo(t, "mdk/internal/vmtest/workload/mdk-workload"),
	}
	bin := vmtest.BuildTest(t, "mdk/collect")
	run := "^TestGuest"
	if v := os.Getenv("MDK_VMTEST_RUN"); v != "" {
		run = v // e.g. MDK_VMTEST_RUN=TestGuestRecorderCost
	}
	for kind, kernel := range kernels {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel() // each guest is one single-threaded QEMU
			vmtest.RunTest(t, vmtest.GuestTest{
				Kernel: kernel, Kind: kind, Binary: bin, Run: run, Files: files,
				Timeout: 10 * time.Minute, Memory: 1536,
			})
		})
	}
}

// guestKind skips outside a guest and, if kinds are given, on other kernels.
func guestKind(t *testing.T, kinds ...vmtest.KernelKind) vmtest.KernelKind {
	t.Helper()
	k := vmtest.RequireGuest(t)
	if len(kinds) > 0 && !slices.Contains(kinds, k) {
		t.Skipf("not run on the %s kernel", k)
	}
	return k
}

// mglruOff switches the multi-generational LRU off for the test (it clears
// accessed bits without clearing idle flags) and back on after.
func mglruOff(t *testing.T) {
	const path = "/sys/kernel/mm/lru_gen/enabled"
	old, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if err := os.WriteFile(path, []byte("n"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.WriteFile(path, old, 0) })
}

// wl is a running mdk-workload.
type wl struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	ready []string // fields of the ready line after "ready"
}

func startWorkload(t *testing.T, args ...string) *wl {
	t.Helper()
	c := exec.Command("/work/mdk-workload", args...)
	if len(args) > 0 && args[0] == "-c" {
		c = exec.Command("/bin/sh", args...)
	}
	c.Stderr = os.Stderr
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w := &wl{cmd: c, in: in, out: bufio.NewReader(out)}
	t.Cleanup(func() { w.in.Close(); c.Process.Kill(); c.Wait() })
	line, err := w.out.ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) < 2 || f[0] != "ready" {
		t.Fatalf("workload: %q, %v", line, err)
	}
	w.ready = f[1:]
	return w
}

func (w *wl) phase(t *testing.T, k int, repeat time.Duration) {
	w.command(t, "phase", k, repeat)
}

func (w *wl) command(t *testing.T, cmd string, k int, repeat time.Duration) {
	t.Helper()
	fmt.Fprintf(w.in, "%s %d %d\n", cmd, k, repeat.Milliseconds())
	line, err := w.out.ReadString('\n')
	if err != nil || line != fmt.Sprintf("done %d\n", k) {
		t.Fatalf("workload phase %d: %q, %v", k, line, err)
	}
}

var windowLine = regexp.MustCompile(`^mdk record: window (\d+): \d+ accessed, \d+ born, \d+ freed; scan (\S+), CPU (\S+), (\d+) pages scanned`)

type logLine struct {
	text string
	at   time.Time
}

// recording is a running mdk record.
type recording struct {
	cmd   *exec.Cmd
	lines chan logLine
	log   strings.Builder
	mu    sync.Mutex
}

func startRecord(t *testing.T, args ...string) *recording {
	t.Helper()
	c := exec.Command("/work/mdk", append([]string{"record"}, args...)...)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	r := &recording{cmd: c, lines: make(chan logLine, 1000)}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.mu.Lock()
			r.log.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			r.lines <- logLine{sc.Text(), time.Now()}
		}
		close(r.lines)
	}()
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return r
}

func (r *recording) wait(t *testing.T) string {
	t.Helper()
	for range r.lines {
	}
	err := r.cmd.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		t.Fatalf("mdk record: %v\n%s", err, r.log.String())
	}
	return r.log.String()
}

// driveSchedule runs the workload's phases in step with the recorder: phase
// k is sent when the recorder logs window k-1 (its scan k is done) and must
// be done before scan k+1 starts, which the log's times and scan durations
// check. It returns the recorder's log.
func driveSchedule(t *testing.T, w *wl, r *recording, phases int, repeat time.Duration) string {
	return drive(t, w, r, phases, func(k int) (string, int) { return "phase", k }, repeat, true)
}

// drive sends the workload command cmdFor(k) when the recorder has logged
// window k-1, for windows k = 1 .. windows-1; with strict, each command must
// be done before the next scan starts.
func drive(t *testing.T, w *wl, r *recording, windows int, cmdFor func(k int) (string, int), repeat time.Duration, strict bool) string {
	t.Helper()
	var doneAt []time.Time
	t0 := time.Now()
	var trail strings.Builder
	for l := range r.lines {
		fmt.Fprintf(&trail, "%6.3fs %s\n", l.at.Sub(t0).Seconds(), l.text)
		m := windowLine.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		j, _ := strconv.Atoi(m[1])
		scan, err := time.ParseDuration(strings.ReplaceAll(m[2], "µ", "u"))
		if err != nil {
			t.Fatalf("log line %q: %v", l.text, err)
		}
		if strict && j >= 1 && j < len(doneAt)+1 && !doneAt[j-1].Before(l.at.Add(-scan)) {
			t.Fatalf("phase %d (done at %.3fs) was not done before scan %d started: make the window longer; the recorder's log:\n%s", j, doneAt[j-1].Sub(t0).Seconds(), j+1, trail.String())
		}
		if k := j + 1; k < windows {
			cmd, arg := cmdFor(k)
			w.command(t, cmd, arg, repeat)
			doneAt = append(doneAt, time.Now())
			fmt.Fprintf(&trail, "%6.3fs %s %d done\n", time.Since(t0).Seconds(), cmd, arg)
		}
	}
	return r.wait(t)
}

// arenaWindows reads the trace at path and returns, per window, the arena
// pages (indexes) accessed, born and freed, for the arena of n pages at
// virtual page first in space 0. Pages outside it (the Go runtime's) are
// left out.
type arenaWindow struct{ a, b, f []int }

func arenaWindows(t *testing.T, path string, first uint64, n int) (trace.Header, []arenaWindow) {
	t.Helper()
	rd, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out []arenaWindow
	idx := func(id uint32) (int, bool) {
		p := rd.Pages()[id]
		if p.Space != 0 || p.Page < first || p.Page >= first+uint64(n) {
			return 0, false
		}
		return int(p.Page - first), true
	}
	pick := func(ids []uint32) []int {
		var s []int
		for _, id := range ids {
			if i, ok := idx(id); ok {
				s = append(s, i)
			}
		}
		slices.Sort(s)
		return s
	}
	for {
		w, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, arenaWindow{pick(w.Accessed), pick(w.Born), pick(w.Freed)})
	}
	return rd.Header(), out
}

// minus returns the elements of a not in b (both sorted).
func minus(a, b []int) []int {
	var out []int
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			out = append(out, x)
		}
	}
	return out
}

func sorted(s []int) []int { s = slices.Clone(s); slices.Sort(s); return s }

// slackBound is the most untouched pages the idle tracker may report as
// accessed in one window: pages faulted in during the previous window that
// are still in a per-CPU LRU batch at the scan cannot be marked idle (the
// kernel only marks pages on an LRU list), so they read as accessed in the
// next window. A folio batch holds 31 pages (PAGEVEC_SIZE); the guest has
// 2 CPUs and the workload faults its pages on one.
const slackBound = 2 * 31

// checkSchedule asserts that the idle-tracked arena trace equals the
// schedule: births and frees exactly; accesses exactly, but for the
// slack: untouched pages reported accessed, all of them faulted in during
// the previous window (or before the first scan), at most slackBound per
// window. It returns the slack of each window.
func checkSchedule(t *testing.T, s workload.Schedule, wins []arenaWindow) []int {
	t.Helper()
	if len(wins) != len(s.Phases) {
		t.Fatalf("%d windows, want %d", len(wins), len(s.Phases))
	}
	slack := make([]int, len(wins))
	for k, w := range wins {
		ph := s.Phases[k]
		wantB, wantF, wantA := sorted(ph.Alloc), sorted(ph.Free), sorted(ph.Touch)
		if k == 0 {
			wantB = sorted(s.Initial)
		}
		if !slices.Equal(w.b, wantB) {
			t.Errorf("window %d: %d born, want %d (missing %v, extra %v)", k, len(w.b), len(wantB), minus(wantB, w.b), minus(w.b, wantB))
		}
		if !slices.Equal(w.f, wantF) {
			t.Errorf("window %d: %d freed, want %d (missing %v, extra %v)", k, len(w.f), len(wantF), minus(wantF, w.f), minus(w.f, wantF))
		}
		if miss := minus(wantA, w.a); len(miss) > 0 {
			t.Errorf("window %d: %d touched pages not seen accessed: %v", k, len(miss), miss)
		}
		extra := minus(w.a, wantA)
		slack[k] = len(extra)
		// The pages that can still sit in an LRU batch: those faulted in
		// since the workload last dropped a page (MADV_DONTNEED drains the
		// batch of its CPU), on either CPU: the last two phases' births, or
		// the initial ones.
		var recent []int
		switch {
		case k <= 1:
			recent = sorted(s.Initial)
		default:
			recent = sorted(append(slices.Clone(s.Phases[k-1].Alloc), s.Phases[k-2].Alloc...))
			if k == 2 {
				recent = sorted(append(recent, s.Initial...))
			}
		}
		if bad := minus(extra, recent); len(bad) > 0 {
			t.Errorf("window %d: untouched pages seen accessed that were not recently faulted in: %v", k, bad)
		}
		if len(extra) > slackBound {
			t.Errorf("window %d: %d untouched pages seen accessed, more than the slack bound %d", k, len(extra), slackBound)
		}
	}
	return slack
}
