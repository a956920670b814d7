package collect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrNoDamon: the kernel has no usable DAMON sysfs interface, or every
// kdamond is someone else's.
var ErrNoDamon = errors.New("collect: no DAMON")

// DamonAdmin returns the DAMON sysfs admin directory.
func (fsys FS) DamonAdmin() string {
	return filepath.Join(fsys.Sys, "kernel/mm/damon/admin")
}

// Kdamond is one kdamond directory of DAMON's sysfs interface as the
// tracker found it.
type Kdamond struct {
	Index    int
	State    string // "on" or "off"
	PID      int    // -1 when off
	Contexts int    // contexts/nr_contexts
}

// Kdamonds reads the kdamonds of DAMON's sysfs interface. It only reads.
func (fsys FS) Kdamonds() ([]Kdamond, error) {
	dir := filepath.Join(fsys.DamonAdmin(), "kdamonds")
	nr, err := readInt(filepath.Join(dir, "nr_kdamonds"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is missing (kernel built without CONFIG_DAMON_SYSFS, or sysfs not mounted): record with --tracker idle, or on a kernel with DAMON", ErrNoDamon, filepath.Join(dir, "nr_kdamonds"))
	}
	if err != nil {
		return nil, err
	}
	var out []Kdamond
	for i := range nr {
		kd := filepath.Join(dir, strconv.Itoa(i))
		state, err := readString(filepath.Join(kd, "state"))
		if err != nil {
			return nil, err
		}
		pid, err := readInt(filepath.Join(kd, "pid"))
		if err != nil {
			return nil, err
		}
		nctx, err := readInt(filepath.Join(kd, "contexts/nr_contexts"))
		if err != nil {
			return nil, err
		}
		out = append(out, Kdamond{Index: i, State: state, PID: pid, Contexts: nctx})
	}
	return out, nil
}

// ChooseKdamond decides, reading only, which kdamond the DAMON tracker may
// use: a new one when there are none (create = true: nr_kdamonds goes from
// 0 to 1), else an idle one that nobody configured (off, no contexts). A
// kdamond that runs, or that is off but configured, belongs to someone else
// and is never touched; when no kdamond is free the error says so (the
// kernel refuses to change nr_kdamonds while any kdamond runs).
func ChooseKdamond(fsys FS) (index int, create bool, err error) {
	kds, err := fsys.Kdamonds()
	if err != nil {
		return 0, false, err
	}
	if len(kds) == 0 {
		return 0, true, nil
	}
	var busy []string
	for _, k := range kds {
		if k.State == "off" && k.Contexts == 0 {
			return k.Index, false, nil
		}
		if k.State == "on" {
			busy = append(busy, fmt.Sprintf("kdamond %d runs as pid %d", k.Index, k.PID))
		} else {
			busy = append(busy, fmt.Sprintf("kdamond %d is off but configured (%d contexts)", k.Index, k.Contexts))
		}
	}
	return 0, false, fmt.Errorf("%w: every kdamond is busy (%s); mdk never takes over a kdamond it did not start, and the kernel cannot add one while another runs: record with --tracker idle, or stop the other DAMON user first", ErrNoDamon, strings.Join(busy, "; "))
}

// errKdamondStopped: the kdamond is off; it stops by itself when its
// target process exits.
var errKdamondStopped = errors.New("DAMON's kdamond stopped")

// damonTracker is one kdamond set up by the recorder: vaddr operations on
// one process, one "stat" scheme matching every region, aggregation
// interval = the window. Each capture asks the kernel to snapshot the
// scheme's tried regions at the next aggregation boundary.
type damonTracker struct {
	kd      string // the kdamond's directory
	admin   string
	created bool // nr_kdamonds was 0 and we set it to 1
	started bool
	sample  time.Duration
	regions []damonRegion // the last capture, sorted by start
}

type damonRegion struct {
	start, end uint64 // bytes
	nrAccesses uint64
	age        uint64
}

// DamonIntervals are the DAMON monitoring attributes the tracker sets.
type DamonIntervals struct {
	Sample time.Duration // sampling interval; default 5ms
	Update time.Duration // DAMON's regions update interval (its own re-reading of the mappings); default a week: see newDamonTracker
	Min    int           // min number of regions; default 10
	Max    int           // max number of regions; default 1000
}

func newDamonTracker(fsys FS, pid int, window time.Duration, iv DamonIntervals) (*damonTracker, error) {
	index, create, err := ChooseKdamond(fsys)
	if err != nil {
		return nil, err
	}
	if iv.Sample == 0 {
		iv.Sample = 5 * time.Millisecond
	}
	if iv.Update == 0 {
		// DAMON's own update replaces the target's regions by three that
		// span the whole mapped address space, holes included, whose huge
		// regions are sampled one page at a time: an 8 MiB buffer in a
		// terabyte-wide region is never sampled. The tracker gives DAMON
		// the process's mappings instead and keeps DAMON from replacing them.
		iv.Update = 7 * 24 * time.Hour
	}
	if iv.Min == 0 {
		iv.Min = 10
	}
	if iv.Max == 0 {
		iv.Max = 1000
	}
	if window < 2*iv.Sample {
		return nil, fmt.Errorf("--window %v is too short for DAMON's sampling interval %v", window, iv.Sample)
	}
	ranges, err := damonRanges(fsys, pid)
	if err != nil {
		return nil, err
	}
	admin := fsys.DamonAdmin()
	t := &damonTracker{admin: admin, kd: filepath.Join(admin, "kdamonds", strconv.Itoa(index)), created: create, sample: iv.Sample}
	if create {
		if err := writeFile(filepath.Join(admin, "kdamonds/nr_kdamonds"), "1"); err != nil {
			return nil, damonErr(err)
		}
	}
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	steps := [][2]string{
		{"contexts/nr_contexts", "1"},
		{"contexts/0/operations", "vaddr"},
		{"contexts/0/monitoring_attrs/intervals/sample_us", us(iv.Sample)},
		{"contexts/0/monitoring_attrs/intervals/aggr_us", us(window)},
		{"contexts/0/monitoring_attrs/intervals/update_us", us(iv.Update)},
		{"contexts/0/monitoring_attrs/nr_regions/min", strconv.Itoa(iv.Min)},
		{"contexts/0/monitoring_attrs/nr_regions/max", strconv.Itoa(iv.Max)},
		{"contexts/0/targets/nr_targets", "1"},
		{"contexts/0/targets/0/pid_target", strconv.Itoa(pid)},
		{"contexts/0/targets/0/regions/nr_regions", strconv.Itoa(len(ranges))},
		{"contexts/0/schemes/nr_schemes", "1"},
		{"contexts/0/schemes/0/action", "stat"},
		// sz and age default to 0..0: without maxima no region matches.
		{"contexts/0/schemes/0/access_pattern/sz/min", "0"},
		{"contexts/0/schemes/0/access_pattern/sz/max", strconv.FormatUint(1<<63, 10)},
		{"contexts/0/schemes/0/access_pattern/nr_accesses/min", "0"},
		{"contexts/0/schemes/0/access_pattern/nr_accesses/max", "4294967295"},
		{"contexts/0/schemes/0/access_pattern/age/min", "0"},
		{"contexts/0/schemes/0/access_pattern/age/max", "4294967295"},
	}
	for i, r := range ranges {
		dir := "contexts/0/targets/0/regions/" + strconv.Itoa(i)
		steps = append(steps, [2]string{dir + "/start", strconv.FormatUint(r[0], 10)}, [2]string{dir + "/end", strconv.FormatUint(r[1], 10)})
	}
	for _, s := range steps {
		if err := writeFile(filepath.Join(t.kd, s[0]), s[1]); err != nil {
			t.close()
			return nil, damonErr(err)
		}
	}
	if err := writeFile(filepath.Join(t.kd, "state"), "on"); err != nil {
		t.close()
		return nil, damonErr(fmt.Errorf("%w (is pid %d still alive?)", err, pid))
	}
	t.started = true
	return t, nil
}

// damonRanges returns the address ranges DAMON is to monitor: the
// process's mappings that can hold pages (not PROT_NONE reservations, not
// the kernel's vdso pages), adjacent ones merged.
func damonRanges(fsys FS, pid int) ([][2]uint64, error) {
	maps, err := fsys.Maps(pid)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %d (no %s)", ErrNoProcess, pid, fsys.pidPath(pid, "maps"))
		}
		return nil, err
	}
	var out [][2]uint64
	for _, m := range maps {
		if skipMapping(m) || strings.HasPrefix(m.Perms, "---") {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == m.Start {
			out[n-1][1] = m.End
			continue
		}
		out = append(out, [2]uint64{m.Start, m.End})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %d has no mapped memory", ErrNoProcess, pid)
	}
	return out, nil
}

func damonErr(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %v: run as root (DAMON's sysfs files are root's)", ErrPermission, err)
	}
	return fmt.Errorf("set up DAMON: %w", err)
}

// capture waits for the end of the current aggregation interval and reads
// the regions DAMON saw, with their access counts over that interval. The
// kernel's write blocks until the snapshot is taken (it polls every 100ms);
// ctx is checked before and after, not during.
func (t *damonTracker) capture(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(t.kd, "state"), "update_schemes_tried_regions"); err != nil {
		if st, serr := readString(filepath.Join(t.kd, "state")); serr == nil && st == "off" {
			t.regions = t.regions[:0]
			return errKdamondStopped
		}
		return fmt.Errorf("DAMON capture: %w", err)
	}
	dir := filepath.Join(t.kd, "contexts/0/schemes/0/tried_regions")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("DAMON capture: %w", err)
	}
	t.regions = t.regions[:0]
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || !e.IsDir() {
			continue
		}
		var r damonRegion
		vals := []*uint64{&r.start, &r.end, &r.nrAccesses, &r.age}
		for i, name := range []string{"start", "end", "nr_accesses", "age"} {
			s, err := readString(filepath.Join(dir, e.Name(), name))
			if err != nil {
				return fmt.Errorf("DAMON capture: %w", err)
			}
			if *vals[i], err = strconv.ParseUint(s, 10, 64); err != nil {
				return fmt.Errorf("%w: %s: expected an unsigned integer, got %q", ErrFormat, filepath.Join(dir, e.Name(), name), s)
			}
		}
		if r.end <= r.start {
			return fmt.Errorf("%w: %s: region end %d not above start %d", ErrFormat, filepath.Join(dir, e.Name()), r.end, r.start)
		}
		t.regions = append(t.regions, r)
	}
	sort.Slice(t.regions, func(i, j int) bool { return t.regions[i].start < t.regions[j].start })
	return ctx.Err()
}

// accessed reports whether the page at vpn lies in a region DAMON saw
// accessed in the last captured interval.
func (t *damonTracker) accessed(vpn uint64) bool {
	addr := vpn * 4096
	i := sort.Search(len(t.regions), func(i int) bool { return t.regions[i].end > addr })
	return i < len(t.regions) && t.regions[i].start <= addr && t.regions[i].nrAccesses > 0
}

// close stops the kdamond and leaves DAMON's sysfs as it was found.
func (t *damonTracker) close() error {
	var errs []error
	if t.started {
		// A kdamond whose target exited has stopped by itself.
		if st, _ := readString(filepath.Join(t.kd, "state")); st != "off" {
			if err := writeFile(filepath.Join(t.kd, "state"), "off"); err != nil {
				errs = append(errs, err)
			}
		}
		t.started = false
	}
	if err := writeFile(filepath.Join(t.kd, "contexts/nr_contexts"), "0"); err != nil {
		errs = append(errs, err)
	}
	if t.created {
		if err := writeFile(filepath.Join(t.admin, "kdamonds/nr_kdamonds"), "0"); err != nil {
			errs = append(errs, err)
		}
		t.created = false
	}
	return errors.Join(errs...)
}

func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return f.Close()
}

func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(path string) (int, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: expected an integer, got %q", ErrFormat, path, s)
	}
	return n, nil
}
