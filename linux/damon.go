package linux

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

// DamonAdmin returns the DAMON sysfs admin directory.
func (fsys FS) DamonAdmin() string {
	return filepath.Join(fsys.Sys, "kernel/mm/damon/admin")
}

// Kdamond is one kdamond directory of DAMON's sysfs interface as found.
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
	if nr < 0 || nr > 1<<16 {
		return nil, fmtErr(filepath.Join(dir, "nr_kdamonds"), "%d kdamonds", nr)
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

// ChooseKdamond decides, reading only, which kdamond mdk may use: a new
// one when there are none (create = true: nr_kdamonds goes from 0 to 1),
// else an idle one that nobody configured (off, no contexts). A kdamond
// that runs, or that is off but configured, belongs to someone else and is
// never touched; when no kdamond is free the error says so (the kernel
// refuses to change nr_kdamonds while any kdamond runs).
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

// ErrKdamondStopped: the kdamond is off; it stops by itself when its
// target process exits.
var ErrKdamondStopped = errors.New("DAMON's kdamond stopped")

// DamonRegion is one region DAMON reported, with its access count over
// the last aggregation interval.
type DamonRegion struct {
	Start, End uint64 // bytes, [Start, End)
	NrAccesses uint64
	Age        uint64
}

// DamonAttrs are the monitoring attributes of a [DamonSession].
type DamonAttrs struct {
	Sample, Aggr, Update time.Duration // sampling, aggregation and regions update intervals
	MinRegions           int
	MaxRegions           int
}

// DamonSession is one kdamond that mdk set up: vaddr operations on one
// process, one "stat" scheme matching every region, so that each
// [DamonSession.Capture] reads the regions the scheme tried in the last
// aggregation interval. Close leaves DAMON's sysfs as it was found.
type DamonSession struct {
	kd      string // the kdamond's directory
	admin   string
	created bool // nr_kdamonds was 0 and we set it to 1
	started bool
}

// StartDamon takes a free kdamond ([ChooseKdamond]; refusing, having
// written nothing, when none is free), gives it the target pid and its
// address ranges (DAMON's own regions update is kept from replacing them
// by a's Update interval) and turns it on.
func (fsys FS) StartDamon(pid int, ranges [][2]uint64, a DamonAttrs) (*DamonSession, error) {
	index, create, err := ChooseKdamond(fsys)
	if err != nil {
		return nil, err
	}
	admin := fsys.DamonAdmin()
	s := &DamonSession{admin: admin, kd: filepath.Join(admin, "kdamonds", strconv.Itoa(index)), created: create}
	if create {
		if err := writeFile(filepath.Join(admin, "kdamonds/nr_kdamonds"), "1"); err != nil {
			return nil, damonErr(err)
		}
	}
	us := func(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
	steps := [][2]string{
		{"contexts/nr_contexts", "1"},
		{"contexts/0/operations", "vaddr"},
		{"contexts/0/monitoring_attrs/intervals/sample_us", us(a.Sample)},
		{"contexts/0/monitoring_attrs/intervals/aggr_us", us(a.Aggr)},
		{"contexts/0/monitoring_attrs/intervals/update_us", us(a.Update)},
		{"contexts/0/monitoring_attrs/nr_regions/min", strconv.Itoa(a.MinRegions)},
		{"contexts/0/monitoring_attrs/nr_regions/max", strconv.Itoa(a.MaxRegions)},
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
	for _, st := range steps {
		if err := writeFile(filepath.Join(s.kd, st[0]), st[1]); err != nil {
			s.Close()
			return nil, damonErr(err)
		}
	}
	if err := writeFile(filepath.Join(s.kd, "state"), "on"); err != nil {
		s.Close()
		return nil, damonErr(fmt.Errorf("%w (is pid %d still alive?)", err, pid))
	}
	s.started = true
	return s, nil
}

func damonErr(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %v: run as root (DAMON's sysfs files are root's)", ErrPermission, err)
	}
	return fmt.Errorf("set up DAMON: %w", err)
}

// Capture waits for the end of the current aggregation interval and
// appends to dst the regions DAMON saw, sorted by start, with their access
// counts over that interval. The kernel's write blocks until the snapshot
// is taken (it polls every 100ms); ctx is checked before and after, not
// during. It returns ErrKdamondStopped once the kdamond is off.
func (s *DamonSession) Capture(ctx context.Context, dst []DamonRegion) ([]DamonRegion, error) {
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	if err := writeFile(filepath.Join(s.kd, "state"), "update_schemes_tried_regions"); err != nil {
		if st, serr := readString(filepath.Join(s.kd, "state")); serr == nil && st == "off" {
			return dst, ErrKdamondStopped
		}
		return dst, fmt.Errorf("DAMON capture: %w", err)
	}
	dir := filepath.Join(s.kd, "contexts/0/schemes/0/tried_regions")
	dst, err := ReadDamonRegions(dir, dst)
	if err != nil {
		return dst, err
	}
	return dst, ctx.Err()
}

// ReadDamonRegions appends the regions of a tried_regions directory (one
// numbered directory per region holding start, end, nr_accesses and age)
// to dst, sorted by start.
func ReadDamonRegions(dir string, dst []DamonRegion) ([]DamonRegion, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return dst, fmt.Errorf("DAMON capture: %w", err)
	}
	n0 := len(dst)
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || !e.IsDir() {
			continue
		}
		var r DamonRegion
		vals := []*uint64{&r.Start, &r.End, &r.NrAccesses, &r.Age}
		for i, name := range []string{"start", "end", "nr_accesses", "age"} {
			s, err := readString(filepath.Join(dir, e.Name(), name))
			if err != nil {
				return dst, fmt.Errorf("DAMON capture: %w", err)
			}
			if *vals[i], err = strconv.ParseUint(s, 10, 64); err != nil {
				return dst, fmtErr(filepath.Join(dir, e.Name(), name), "expected an unsigned integer, got %q", s)
			}
		}
		if r.End <= r.Start {
			return dst, fmtErr(filepath.Join(dir, e.Name()), "region end %d not above start %d", r.End, r.Start)
		}
		dst = append(dst, r)
	}
	rs := dst[n0:]
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	return dst, nil
}

// Close stops the kdamond and leaves DAMON's sysfs as it was found.
func (s *DamonSession) Close() error {
	var errs []error
	if s.started {
		// A kdamond whose target exited has stopped by itself.
		if st, _ := readString(filepath.Join(s.kd, "state")); st != "off" {
			if err := writeFile(filepath.Join(s.kd, "state"), "off"); err != nil {
				errs = append(errs, err)
			}
		}
		s.started = false
	}
	if err := writeFile(filepath.Join(s.kd, "contexts/nr_contexts"), "0"); err != nil {
		errs = append(errs, err)
	}
	if s.created {
		if err := writeFile(filepath.Join(s.admin, "kdamonds/nr_kdamonds"), "0"); err != nil {
			errs = append(errs, err)
		}
		s.created = false
	}
	return errors.Join(errs...)
}
