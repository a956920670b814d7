package collect

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdk/internal/vmtest"
	"mdk/internal/vmtest/workload"
	"mdk/trace"

	"mdk/linux"
)

const (
	damonWindow = 2 * time.Second
	damonRepeat = -time.Millisecond // the workload touches its pages until the next command
	damonBlock  = 64                // pages per decision block of the schedule
)

func jaccard(a, b []int) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := len(a) - len(minus(a, b))
	return float64(inter) / float64(len(a)+len(b)-inter)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// damonSysfsClean asserts that DAMON's sysfs is as a fresh boot has it.
func damonSysfsClean(t *testing.T) {
	t.Helper()
	kds, err := linux.NewFS("/proc", "/sys").Kdamonds()
	if err != nil || len(kds) != 0 {
		t.Errorf("DAMON sysfs after mdk record: %v, %v; want no kdamonds", kds, err)
	}
}

// The DAMON comparison runs in epochs of three windows: the workload runs
// phase e (faults in, frees, touches) in the first window of epoch e and
// touches the same pages again in the next two. DAMON's windows are its
// aggregation intervals, which under emulation are longer than --window and
// not in step with the recorder's log, so a window next to an epoch change
// can hold the touches of both epochs; the middle window of an epoch holds
// only that epoch's, and the comparisons use it.
const (
	epochs      = 4
	epochLength = 3
)

func epochCommand(k int) (string, int) {
	if k%epochLength == 0 {
		return "phase", k / epochLength
	}
	return "touch", k / epochLength
}

// recordEpochs records the epoch workload and returns the arena windows.
func recordEpochs(t *testing.T, extra ...string) []arenaWindow {
	t.Helper()
	w := startWorkload(t, "schedule", strconv.Itoa(schedSeed), strconv.Itoa(schedPages), strconv.Itoa(epochs), strconv.Itoa(damonBlock))
	first, n := arenaOf(t, w)
	out := filepath.Join(t.TempDir(), "rec.mdkt")
	windows := epochs * epochLength
	args := append([]string{"--pid", strconv.Itoa(w.cmd.Process.Pid), "--window", damonWindow.String(),
		"--duration", (time.Duration(windows) * damonWindow).String(), "-o", out}, extra...)
	r := startRecord(t, args...)
	drive(t, w, r, windows, epochCommand, damonRepeat, false)
	_, wins := arenaWindows(t, out, first, n)
	if len(wins) != windows {
		t.Fatalf("%d windows, want %d", len(wins), windows)
	}
	return wins
}

// checkEpochLifecycle: births and frees come from pagemap with every
// tracker, so they are exactly the schedule's, in each epoch's first window.
func checkEpochLifecycle(t *testing.T, s workload.Schedule, wins []arenaWindow) {
	t.Helper()
	for k, w := range wins {
		var wantB, wantF []int
		switch {
		case k == 0:
			wantB = sorted(s.Initial)
		case k%epochLength == 0:
			wantB, wantF = sorted(s.Phases[k/epochLength].Alloc), sorted(s.Phases[k/epochLength].Free)
		}
		if !equalInts(w.b, wantB) || !equalInts(w.f, wantF) {
			t.Errorf("window %d: %d born, %d freed; want %d, %d", k, len(w.b), len(w.f), len(wantB), len(wantF))
		}
	}
}

// TestGuestDamon records the epoch workload with --tracker damon on both
// kernels: births and frees exactly; no arena page accessed in epoch 0,
// where the workload touches nothing; in each later epoch's middle window
// the accessed set close to the schedule's (Jaccard similarity, logged). On
// the custom kernel the same workload is also recorded with the idle
// tracker: the two compared window by window and by their curves (mdk mpc,
// age policy).
func TestGuestDamon(t *testing.T) {
	kind := guestKind(t)
	mglruOff(t)
	s := workload.NewBlockSchedule(schedSeed, schedPages, epochs, damonBlock)
	dwins := recordEpochs(t, "--tracker", "damon")
	damonSysfsClean(t)
	checkEpochLifecycle(t, s, dwins)
	for k := range epochLength {
		if n := len(dwins[k].a); n != 0 {
			t.Errorf("DAMON: %d arena pages accessed in window %d, where the workload touched none", n, k)
		}
	}
	var js []string
	sumJ, sumRecall := 0.0, 0.0
	for e := 1; e < epochs; e++ {
		k := e*epochLength + 1
		touched := sorted(s.Phases[e].Touch)
		j := jaccard(dwins[k].a, touched)
		recall := 1 - float64(len(minus(touched, dwins[k].a)))/float64(max(1, len(touched)))
		sumJ += j
		sumRecall += recall
		js = append(js, fmt.Sprintf("w%d: %d accessed of %d touched, recall %.2f, Jaccard %.2f", k, len(dwins[k].a), len(touched), recall, j))
		if len(dwins[k].a) == 0 {
			t.Errorf("DAMON saw no arena access in window %d, where %d pages were touched all along", k, len(touched))
		}
	}
	n := float64(epochs - 1)
	t.Logf("%s kernel: DAMON vs schedule in each epoch's middle window: %s (mean recall %.3f, mean Jaccard %.3f)", kind, strings.Join(js, "; "), sumRecall/n, sumJ/n)
	// DAMON finds most touched regions (it samples each region hundreds of
	// times a window), but a small touched region merged into a large
	// untouched one can average to zero accesses; and it gives up
	// resolution: a region's untouched pages come out accessed too.
	if sumRecall/n < 0.5 {
		t.Errorf("DAMON missed most touched pages: mean recall %.2f", sumRecall/n)
	}
	if kind != vmtest.Custom {
		return
	}
	iwins := recordEpochs(t)
	checkEpochLifecycle(t, s, iwins)
	js = js[:0]
	for e := 1; e < epochs; e++ {
		k := e*epochLength + 1
		ji := jaccard(iwins[k].a, sorted(s.Phases[e].Touch))
		js = append(js, fmt.Sprintf("w%d idle-vs-schedule %.2f damon-vs-idle %.2f", k, ji, jaccard(dwins[k].a, iwins[k].a)))
		if ji < 0.95 {
			t.Errorf("idle tracker, window %d: Jaccard %.3f with the schedule", k, ji)
		}
	}
	t.Logf("custom kernel: %s", strings.Join(js, ", "))
	dir := t.TempDir()
	if keep := os.Getenv("MDK_VMTEST_KEEP"); keep != "" {
		dir = keep
	}
	dpath, ipath := filepath.Join(dir, "damon.txt"), filepath.Join(dir, "idle.txt")
	writeArenaTrace(t, dpath, dwins)
	writeArenaTrace(t, ipath, iwins)
	dc, ic := ageCurve(t, dpath), ageCurve(t, ipath)
	var diffs []string
	worst := 0.0
	for a := range min(len(dc), len(ic)) {
		d := math.Abs(dc[a] - ic[a])
		worst = max(worst, d)
		diffs = append(diffs, fmt.Sprintf("A=%d: %.3f vs %.3f", a, ic[a], dc[a]))
	}
	t.Logf("age policy savings, idle vs DAMON: %s; largest difference %.3f", strings.Join(diffs, "; "), worst)
}

// writeArenaTrace writes the arena windows as a text trace (pages = arena
// indexes), for mdk mpc.
func writeArenaTrace(t *testing.T, path string, wins []arenaWindow) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	format, err := trace.FormatForPath(path)
	if err != nil {
		t.Fatal(err)
	}
	h := trace.DefaultHeader()
	h.Window = damonWindow
	w, err := format.NewWriter(f, h)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int]uint32{}
	var win trace.Window
	id := func(i int) uint32 {
		if v, ok := ids[i]; ok {
			return v
		}
		v := uint32(len(ids))
		ids[i] = v
		win.New = append(win.New, trace.Page{Page: uint64(i)})
		return v
	}
	for k, aw := range wins {
		win.Reset(k)
		for _, i := range aw.b {
			win.Born = append(win.Born, id(i))
		}
		for _, i := range aw.a {
			win.Accessed = append(win.Accessed, id(i))
		}
		for _, i := range aw.f {
			win.Freed = append(win.Freed, id(i))
		}
		if err := w.WriteWindow(&win); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// ageCurve runs mdk mpc on the trace for the age policy, A = 0..4 windows,
// and returns each setting's savings.
func ageCurve(t *testing.T, path string) []float64 {
	t.Helper()
	out, err := exec.Command("/work/mdk", "mpc", path, "--csv", "-p", "age:A=0..4/1").CombinedOutput()
	if err != nil {
		t.Fatalf("mdk mpc: %v\n%s", err, out)
	}
	var s []float64
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		f := strings.Split(l, ",")
		v, err := strconv.ParseFloat(f[len(f)-2], 64)
		if err != nil {
			t.Fatalf("mdk mpc line %q", l)
		}
		s = append(s, v)
	}
	return s
}

// TestGuestDamonRefusesBusy occupies the guest's only kdamond (a paddr
// context, running) and checks that mdk record --tracker damon refuses
// with the one-line error and leaves that kdamond running, untouched.
func TestGuestDamonRefusesBusy(t *testing.T) {
	guestKind(t)
	admin := "/sys/kernel/mm/damon/admin/kdamonds"
	must := func(path, v string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(admin, path), []byte(v), 0); err != nil {
			t.Fatalf("%s <- %s: %v", path, v, err)
		}
	}
	must("nr_kdamonds", "1")
	must("0/contexts/nr_contexts", "1")
	must("0/contexts/0/operations", "paddr")
	must("0/contexts/0/targets/nr_targets", "1")
	must("0/state", "on")
	t.Cleanup(func() {
		os.WriteFile(filepath.Join(admin, "0/state"), []byte("off"), 0)
		os.WriteFile(filepath.Join(admin, "0/contexts/nr_contexts"), []byte("0"), 0)
		os.WriteFile(filepath.Join(admin, "nr_kdamonds"), []byte("0"), 0)
	})
	before, err := linux.NewFS("/proc", "/sys").Kdamonds()
	if err != nil || len(before) != 1 || before[0].State != "on" || before[0].PID <= 0 {
		t.Fatalf("kdamonds: %v, %v", before, err)
	}
	c := exec.Command("/work/mdk", "record", "--pid", strconv.Itoa(os.Getpid()), "--tracker", "damon",
		"--window", "1s", "--duration", "2s", "-o", filepath.Join(t.TempDir(), "x.mdkt"))
	out, _ := c.CombinedOutput()
	msg := strings.TrimSpace(string(out))
	want := fmt.Sprintf("every kdamond is busy (kdamond 0 runs as pid %d)", before[0].PID)
	if c.ProcessState.ExitCode() != 1 || !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("mdk record --tracker damon with the kdamond busy: exit %d, %q; want 1 and %q", c.ProcessState.ExitCode(), msg, want)
	}
	after, err := linux.NewFS("/proc", "/sys").Kdamonds()
	if err != nil || len(after) != 1 || after[0] != before[0] {
		t.Errorf("the busy kdamond changed: %v -> %v (%v)", before, after, err)
	}
	ops, _ := os.ReadFile(filepath.Join(admin, "0/contexts/0/operations"))
	if strings.TrimSpace(string(ops)) != "paddr" {
		t.Errorf("the busy kdamond's operations changed to %q", ops)
	}
}

// TestGuestDamonTargetExits: when the recorded process exits, its kdamond
// stops by itself; mdk record ends cleanly (exit status 0, "the targets
// exited"), the process's pages freed in the last window, and DAMON's sysfs
// left as found.
func TestGuestDamonTargetExits(t *testing.T) {
	guestKind(t)
	w := startWorkload(t, "schedule", "3", "256", "2")
	out := filepath.Join(t.TempDir(), "exit.mdkt")
	r := startRecord(t, "--pid", strconv.Itoa(w.cmd.Process.Pid), "--tracker", "damon", "--window", "1s", "--duration", "60s", "-o", out)
	for l := range r.lines {
		if strings.HasPrefix(l.text, "mdk record: window 1:") {
			fmt.Fprintln(w.in, "exit")
			break
		}
	}
	log := r.wait(t)
	if !strings.Contains(log, "stopped: the targets exited") {
		t.Errorf("log:\n%s", log)
	}
	damonSysfsClean(t)
	rd, c, err := trace.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := trace.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	alive := map[uint32]bool{}
	for _, w := range tr.Windows {
		for _, id := range w.Born {
			alive[id] = true
		}
		for _, id := range w.Freed {
			delete(alive, id)
		}
	}
	last := tr.Windows[len(tr.Windows)-1]
	if len(tr.Windows) < 3 || len(alive) != 0 || len(last.Freed) == 0 {
		t.Errorf("%d windows; %d pages still alive at the end, %d freed in the last window; want all freed", len(tr.Windows), len(alive), len(last.Freed))
	}
}
