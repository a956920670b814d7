package collect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"mdk/linux"
)

// damonTracker is the recorder's DAMON tracker: one kdamond
// ([linux.DamonSession]) on one process, aggregation interval = the
// window. Each capture asks the kernel to snapshot the scheme's tried
// regions at the next aggregation boundary.
type damonTracker struct {
	s       *linux.DamonSession
	sample  time.Duration
	regions []linux.DamonRegion // the last capture, sorted by start
}

// DamonIntervals are the DAMON monitoring attributes the tracker sets.
type DamonIntervals struct {
	Sample time.Duration // sampling interval; default 5ms
	Update time.Duration // DAMON's regions update interval (its own re-reading of the mappings); default a week: see newDamonTracker
	Min    int           // min number of regions; default 10
	Max    int           // max number of regions; default 1000
}

func newDamonTracker(fsys linux.FS, pid int, window time.Duration, iv DamonIntervals) (*damonTracker, error) {
	if _, _, err := linux.ChooseKdamond(fsys); err != nil {
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
	s, err := fsys.StartDamon(pid, ranges, linux.DamonAttrs{Sample: iv.Sample, Aggr: window, Update: iv.Update, MinRegions: iv.Min, MaxRegions: iv.Max})
	if err != nil {
		return nil, err
	}
	return &damonTracker{s: s, sample: iv.Sample}, nil
}

// damonRanges returns the address ranges DAMON is to monitor: the
// process's mappings that can hold pages (not PROT_NONE reservations, not
// the kernel's vdso pages), adjacent ones merged.
func damonRanges(fsys linux.FS, pid int) ([][2]uint64, error) {
	maps, err := fsys.Maps(pid)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %d (no %s)", linux.ErrNoProcess, pid, fsys.PIDPath(pid, "maps"))
		}
		return nil, err
	}
	var out [][2]uint64
	for _, m := range maps {
		if m.Kernel() || strings.HasPrefix(m.Perms, "---") {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == m.Start {
			out[n-1][1] = m.End
			continue
		}
		out = append(out, [2]uint64{m.Start, m.End})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %d has no mapped memory", linux.ErrNoProcess, pid)
	}
	return out, nil
}

// capture waits for the end of the current aggregation interval and reads
// the regions DAMON saw, with their access counts over that interval.
func (t *damonTracker) capture(ctx context.Context) error {
	var err error
	t.regions, err = t.s.Capture(ctx, t.regions[:0])
	if errors.Is(err, linux.ErrKdamondStopped) {
		t.regions = t.regions[:0]
	}
	return err
}

// accessed reports whether the page at vpn lies in a region DAMON saw
// accessed in the last captured interval.
func (t *damonTracker) accessed(vpn uint64) bool {
	addr := vpn * uint64(linux.PageSize())
	i := sort.Search(len(t.regions), func(i int) bool { return t.regions[i].End > addr })
	return i < len(t.regions) && t.regions[i].Start <= addr && t.regions[i].NrAccesses > 0
}

// close stops the kdamond and leaves DAMON's sysfs as it was found.
func (t *damonTracker) close() error { return t.s.Close() }
