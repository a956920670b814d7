package collect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"mdk/linux"
	"mdk/trace"
)

// entry is one existing virtual page of a space at one scan. Scans are kept
// as slices sorted by vpn, so two scans are compared by a merge.
type entry struct {
	vpn uint64
	pme uint64 // pagemap entry: present/swapped bits and PFN
	id  uint32 // dense page ID; noID until the page is announced
}

const noID = ^uint32(0)

// space is one target process.
type space struct {
	pid  int
	prev []entry // the previous scan's pages
	cur  []entry
	gone bool // the process has exited; its pages were freed
}

// Recorder samples the pages of live processes with idle page tracking.
//
// Scan k (k = 0, 1, ...) happens at start + k*window. It reads each
// target's maps and pagemap; reads back the idle bits of the present pages'
// page frames (which scan k-1 set); marks every present page idle again;
// and compares scan k with scan k-1 to write window k-1:
//
//  1. a page present at both scans whose idle bit is clear is accessed (a);
//     a page present now that was swapped out at scan k-1 was swapped back
//     in, which is an access (a);
//  2. a page present or swapped now that did not exist at scan k-1 is born
//     (b), and so is every page of scan 0 in window 0;
//  3. a page that existed at scan k-1 and is neither present nor swapped
//     now, or whose process exited, is freed (f).
//
// The idle bit of a page frame is looked up for its current PFN: the kernel
// copies the idle flag when it migrates a page, and a page that was
// re-faulted (copy-on-write, swap-in) has a fresh frame that is not idle, so
// both come out right. Pages are (space, virtual page number); a space is
// the index of its pid in the order first seen.
type Recorder struct {
	opt    Options
	bitmap linux.BitmapFile

	spaces []*space
	byPID  map[int]int // pid -> space
	ids    map[trace.Page]uint32
	pages  int

	want []uint64 // idle-bitmap words to mark, indexed by word
	got  []uint64 // idle-bitmap words read back
	pme  []uint64 // pagemap scratch
	io   []byte   // bitmap I/O scratch

	damon *damonTracker // TrackerDamon
	phys  []*space      // PagesPhysical: page frames, swap entries

	win     trace.Window
	sum     Summary
	mglru   bool
	scanned int64

	partialWarned bool

	// The targets' mappings, each once, with the window it was first seen
	// in (the sidecar TRACE.maps, docs/trace-format.md).
	mappings []trace.Mapping
	mapSeen  map[trace.Mapping]bool // keyed with Window 0
	mapsFull bool                   // trace.MaxMappings reached
	scanK    int                    // the scan being performed
}

// NewRecorder checks the kernel and the targets and returns a recorder. It
// fails with a one-line error naming the cause: no idle page tracking
// ([linux.ErrNoIdleTrack]), no permission ([linux.ErrPermission]), no such
// process ([linux.ErrNoProcess]); not Linux ([linux.ErrNotSupported]).
func NewRecorder(opt Options) (*Recorder, error) {
	if err := linux.Supported(); err != nil {
		return nil, err
	}
	if opt.Window <= 0 {
		return nil, fmt.Errorf("window must be positive, got %v", opt.Window)
	}
	if (len(opt.PIDs) == 0) == (opt.Cgroup == "") {
		return nil, errors.New("give either pids or a cgroup")
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if err := opt.Sample.Validate(); err != nil {
		return nil, err
	}
	if opt.Sample.All() {
		opt.Sample = trace.Sample{}
	}
	if err := opt.partitioning().Validate(); err != nil {
		return nil, err
	}
	if opt.FS.Proc == "" {
		opt.FS = linux.Default()
	}
	r := &Recorder{opt: opt, byPID: map[int]int{}, ids: map[trace.Page]uint32{}}
	for _, pid := range opt.PIDs {
		if _, err := os.Stat(opt.FS.PIDPath(pid, "maps")); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: %d (no %s)", linux.ErrNoProcess, pid, opt.FS.PIDPath(pid, "maps"))
			}
			return nil, err
		}
	}
	if opt.Cgroup != "" {
		if _, err := opt.FS.CgroupProcs(opt.Cgroup); err != nil {
			return nil, fmt.Errorf("cgroup %s: %w", opt.Cgroup, err)
		}
	}
	if opt.Pages == PagesPhysical {
		if opt.Tracker == TrackerDamon {
			return nil, errors.New("--pages physical needs --tracker idle: DAMON's vaddr operations see virtual pages")
		}
		r.phys = []*space{{pid: -1}, {pid: -1}}
	} else if opt.Pages != PagesVirtual && opt.Pages != "" {
		return nil, fmt.Errorf("unknown page key %q (want virtual or physical)", opt.Pages)
	}
	switch opt.Tracker {
	case TrackerDamon:
		if len(opt.PIDs) != 1 {
			return nil, errors.New("--tracker damon records one process: give one --pid")
		}
		t, err := newDamonTracker(opt.FS, opt.PIDs[0], opt.Window, opt.Damon)
		if err != nil {
			return nil, err
		}
		r.damon = t
		return r, nil
	case TrackerIdle, "":
	default:
		return nil, fmt.Errorf("unknown tracker %q (want idle or damon)", opt.Tracker)
	}
	bm, err := opt.FS.IdleBitmap()
	if err != nil {
		return nil, err
	}
	r.bitmap = bm
	if on, err := opt.FS.MGLRUEnabled(); err == nil && on {
		r.mglru = true
		fmt.Fprintf(opt.Log, "mdk record: warning: the multi-generational LRU is enabled; it clears accessed bits without clearing idle flags, so idle tracking over-reports idleness. Switch it off while recording: echo n > /sys/kernel/mm/lru_gen/enabled\n")
	}
	return r, nil
}

// Close releases the bitmap, or stops the kdamond the recorder started and
// restores DAMON's sysfs files.
func (r *Recorder) Close() error {
	if r.damon != nil {
		return r.damon.close()
	}
	return r.bitmap.Close()
}
