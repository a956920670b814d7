package collect

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"mdk/internal/outfile"
	"mdk/trace"
)

// Options configure a [Recorder].
type Options struct {
	FS FS // kernel files; NewFS("/proc", "/sys") for the running kernel

	// Targets: either PIDs, or a Cgroup whose cgroup.procs is read at
	// every scan (processes may join and leave).
	PIDs   []int
	Cgroup string

	// Tracker says how accesses are seen: TrackerIdle (the default, idle
	// page tracking) or TrackerDamon (DAMON's vaddr operations; one pid).
	Tracker Tracker
	Damon   DamonIntervals // DAMON's monitoring attributes (TrackerDamon)

	// Pages says what a page of the trace is: PagesVirtual (the default, a
	// process's virtual page) or PagesPhysical (a page frame, counted once
	// however many target processes map it; physical.go).
	Pages PageKey

	Window   time.Duration // window length (> 0)
	Duration time.Duration // stop after this long; 0: until the targets exit or ctx ends

	Log io.Writer // per-window cost and warnings; nil: discarded

	// Sample, if set, records only the pages it keeps (trace.Sample.Keep
	// of (space, virtual page number)): the others are dropped as their
	// pagemap entries are read, so their idle bits are never read or set.
	// The trace's header carries the sample, so every command scales its
	// counts.
	Sample trace.Sample

	// AfterScan, if set, is called after scan k (k = 0, 1, ...) has marked
	// the pages idle and written window k-1, before the recorder waits for
	// the next scan. Progress displays and tests (a fake kernel that acts
	// between scans) use it.
	AfterScan func(scan int)
}

// Cost is the recorder's own cost of one scan.
type Cost struct {
	Scan  time.Duration // wall time of the scan
	CPU   time.Duration // user+system CPU time of the recorder process during the scan
	Pages int64         // pages scanned (present or swapped)
}

// Summary describes a finished recording.
type Summary struct {
	Windows int
	Spaces  []int // pid of each space, by space number
	Total   Cost  // sums over all scans
	Max     Cost  // per-field maxima over all scans
	Scans   int
	Overrun int // scans that started late because the previous one overran its window
	Reason  string
}

// String is the one-paragraph summary put in the trace's description.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "recorder cost over %d scans: scan time mean %v max %v; CPU mean %v max %v; pages scanned mean %d max %d",
		s.Scans, mean(s.Total.Scan, s.Scans), s.Max.Scan, mean(s.Total.CPU, s.Scans), s.Max.CPU, meanInt(s.Total.Pages, s.Scans), s.Max.Pages)
	if s.Overrun > 0 {
		fmt.Fprintf(&b, "; %d scans overran their window", s.Overrun)
	}
	if s.Reason != "" {
		fmt.Fprintf(&b, "; stopped: %s", s.Reason)
	}
	return b.String()
}

func mean(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(time.Microsecond)
}

func meanInt(v int64, n int) int64 {
	if n == 0 {
		return 0
	}
	return v / int64(n)
}

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
	bitmap BitmapFile

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
}

// NewRecorder checks the kernel and the targets and returns a recorder. It
// fails with a one-line error naming the cause: no idle page tracking
// ([ErrNoIdleTrack]), no permission ([ErrPermission]), no such process
// ([ErrNoProcess]).
func NewRecorder(opt Options) (*Recorder, error) {
	if !platformSupported {
		return nil, ErrNotSupported
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
	if opt.FS.Proc == "" {
		opt.FS = NewFS("/proc", "/sys")
	}
	r := &Recorder{opt: opt, byPID: map[int]int{}, ids: map[trace.Page]uint32{}}
	for _, pid := range opt.PIDs {
		if _, err := os.Stat(opt.FS.pidPath(pid, "maps")); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: %d (no %s)", ErrNoProcess, pid, opt.FS.pidPath(pid, "maps"))
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

// Run records until opt.Duration has passed, every target has exited (a
// cgroup: its directory was removed), or ctx ends. It calls newWriter once,
// after the first scan, with the trace header (Source names the space of
// each pid), then writes and flushes every completed window. A window cut
// short by ctx is dropped. The returned summary also holds the reason for
// stopping. Ending by ctx is not an error.
func (r *Recorder) Run(ctx context.Context, newWriter func(trace.Header) (trace.Writer, error)) (Summary, error) {
	opt := r.opt
	start := time.Now()
	maxWindows := -1
	if opt.Duration > 0 {
		maxWindows = int(opt.Duration / opt.Window)
		if maxWindows < 1 {
			return r.sum, fmt.Errorf("duration %v is shorter than one window (%v)", opt.Duration, opt.Window)
		}
	}
	var w trace.Writer
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	if r.damon != nil {
		// Scan 0 right after an aggregation boundary, so that each
		// window is one aggregation interval.
		if err := r.damon.capture(ctx); err != nil {
			if ctx.Err() != nil {
				r.sum.Reason = "interrupted"
				return r.sum, nil
			}
			return r.sum, err
		}
	}
	for k := 0; ; k++ {
		if k > 0 && r.damon != nil {
			if err := r.damon.capture(ctx); errors.Is(err, errKdamondStopped) {
				// The kdamond ends by itself when its target exits: the
				// scan below finds the process gone and ends the
				// recording; if the process still runs, someone else
				// stopped the kdamond.
				if alive, serr := r.scan(k); serr != nil || alive {
					if w != nil {
						w.Close()
					}
					if serr == nil {
						serr = fmt.Errorf("%w while pid %d still runs (turned off by someone else?)", err, r.opt.PIDs[0])
					}
					return r.sum, serr
				}
				if err := w.WriteWindow(&r.win); err != nil {
					return r.sum, fmt.Errorf("write window %d: %w", r.win.Index, err)
				}
				r.sum.Windows = k
				r.sum.Reason = "the targets exited"
				return r.sum, r.closeWriter(w)
			} else if err != nil {
				if ctx.Err() != nil {
					r.sum.Reason = "interrupted"
					return r.sum, r.closeWriter(w)
				}
				if w != nil {
					w.Close()
				}
				return r.sum, err
			}
		} else if k > 0 {
			next := start.Add(time.Duration(k) * opt.Window)
			if d := time.Until(next); d > 0 {
				timer.Reset(d)
				select {
				case <-ctx.Done():
					r.sum.Reason = "interrupted"
					return r.sum, r.closeWriter(w)
				case <-timer.C:
				}
			} else {
				r.sum.Overrun++
			}
		}
		alive, err := r.scan(k)
		if err != nil {
			if w != nil {
				w.Close()
			}
			return r.sum, err
		}
		if k == 0 {
			if w, err = newWriter(r.header()); err != nil {
				return r.sum, err
			}
		} else {
			if err := w.WriteWindow(&r.win); err != nil {
				return r.sum, fmt.Errorf("write window %d: %w", r.win.Index, err)
			}
			if f, ok := w.(interface{ Flush() error }); ok {
				if err := f.Flush(); err != nil {
					return r.sum, fmt.Errorf("flush window %d: %w", r.win.Index, err)
				}
			}
			r.sum.Windows = k
		}
		if opt.AfterScan != nil {
			opt.AfterScan(k)
		}
		switch {
		case !alive:
			r.sum.Reason = "the targets exited"
		case maxWindows >= 0 && k >= maxWindows:
			r.sum.Reason = "duration reached"
		case ctx.Err() != nil:
			r.sum.Reason = "interrupted"
		default:
			continue
		}
		return r.sum, r.closeWriter(w)
	}
}

func (r *Recorder) closeWriter(w trace.Writer) error {
	if w == nil {
		return nil
	}
	return w.Close()
}

// header is the trace header, written after scan 0.
func (r *Recorder) header() trace.Header {
	var b strings.Builder
	if r.damon != nil {
		fmt.Fprintf(&b, "mdk record: Linux DAMON (vaddr; a region accessed in a window makes all its existing pages accessed), window = aggregation interval %v, sampling %v; ", r.opt.Window, r.damon.sample)
	} else {
		fmt.Fprintf(&b, "mdk record: Linux idle page tracking, window %v; ", r.opt.Window)
	}
	if r.phys != nil {
		b.WriteString("pages = page frames, each counted once (space 0: page frame number; space 1: swap entry of a swapped-out page); ")
	}
	if r.opt.Cgroup != "" {
		fmt.Fprintf(&b, "cgroup %s; ", r.opt.Cgroup)
	}
	b.WriteString("space = pid index in order first seen:")
	for i, s := range r.spaces {
		fmt.Fprintf(&b, " %d=%d", i, s.pid)
	}
	if r.phys != nil {
		b.WriteString(" (not the trace's spaces)")
	}
	if r.opt.Cgroup != "" {
		b.WriteString(" (later pids in the log)")
	}
	if r.mglru {
		b.WriteString("; WARNING: MGLRU was enabled, idleness over-reported")
	}
	if !r.opt.Sample.All() {
		fmt.Fprintf(&b, "; sampled: %s of the pages", r.opt.Sample)
	}
	return trace.Header{PageSize: 4096, Window: r.opt.Window, Source: b.String(), Sample: r.opt.Sample}
}

// targets returns the pids to scan now, and whether the target still
// exists at all (a cgroup directory).
func (r *Recorder) targets() ([]int, bool, error) {
	if r.opt.Cgroup == "" {
		return r.opt.PIDs, true, nil
	}
	pids, err := r.opt.FS.CgroupProcs(r.opt.Cgroup)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return pids, true, err
}

// scan performs scan k and, for k > 0, fills r.win with window k-1. It
// returns whether any target is still alive.
func (r *Recorder) scan(k int) (bool, error) {
	t0 := time.Now()
	cpu0 := cpuTime()
	pids, exists, err := r.targets()
	if err != nil {
		return false, err
	}
	// 1. Read every target's pages into cur.
	seen := make(map[int]bool, len(pids))
	for _, pid := range pids {
		seen[pid] = true
		si, ok := r.byPID[pid]
		if !ok {
			si = len(r.spaces)
			r.byPID[pid] = si
			r.spaces = append(r.spaces, &space{pid: pid})
			if k > 0 {
				fmt.Fprintf(r.opt.Log, "mdk record: pid %d is space %d\n", pid, si)
			}
		}
		s := r.spaces[si]
		if s.gone {
			continue // pid reused after exit, or left and came back: not followed
		}
		cur, err := r.readPages(pid, uint32(si), s.cur[:0])
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errProcessGone) || errors.Is(err, errSearch):
			s.cur, s.gone = s.cur[:0], true
			continue
		case err != nil:
			return false, err
		}
		s.cur = cur
	}
	alive := false
	for _, s := range r.spaces {
		if !seen[s.pid] {
			s.gone = true // left the cgroup (or exited)
		}
		if s.gone {
			s.cur = s.cur[:0] // its pages are freed once, then it has none
		}
		if !s.gone && (len(s.cur) > 0 || r.opt.Cgroup == "") {
			alive = true
		}
	}
	if r.opt.Cgroup != "" {
		alive = exists
	}
	// 2. Read back the idle bits and mark the present pages idle again
	// (DAMON: the regions were captured before the scan).
	if r.damon == nil {
		if err := r.markAndRead(k > 0); err != nil {
			return false, err
		}
	}
	// 3. Compare with the previous scan.
	compared := r.spaces
	if r.phys != nil {
		r.buildPhysical()
		compared = r.phys
	}
	if k > 0 {
		r.win.Reset(k - 1)
		for si, s := range compared {
			r.compare(uint32(si), s, k == 1)
		}
	}
	var pages int64
	for _, s := range r.spaces {
		s.prev, s.cur = s.cur, s.prev
		pages += int64(len(s.prev))
	}
	for _, s := range r.phys {
		s.prev, s.cur = s.cur, s.prev
	}
	c := Cost{Scan: time.Since(t0), CPU: cpuTime() - cpu0, Pages: pages}
	r.sum.Scans++
	r.sum.Total.Scan += c.Scan
	r.sum.Total.CPU += c.CPU
	r.sum.Total.Pages += c.Pages
	r.sum.Max.Scan = max(r.sum.Max.Scan, c.Scan)
	r.sum.Max.CPU = max(r.sum.Max.CPU, c.CPU)
	r.sum.Max.Pages = max(r.sum.Max.Pages, c.Pages)
	r.sum.Spaces = r.sum.Spaces[:0]
	for _, s := range r.spaces {
		r.sum.Spaces = append(r.sum.Spaces, s.pid)
	}
	if k > 0 {
		fmt.Fprintf(r.opt.Log, "mdk record: window %d: %d accessed, %d born, %d freed; scan %v, CPU %v, %d pages scanned\n",
			k-1, len(r.win.Accessed), len(r.win.Born), len(r.win.Freed), c.Scan.Round(time.Microsecond), c.CPU, c.Pages)
	}
	return alive, nil
}

var errProcessGone = errors.New("process gone")

// Scan performs scan k now, for a caller that keeps the window clock itself
// (mdk agent): scans are numbered 0, 1, ... in order, as in [Recorder.Run].
// For k > 0 it returns window k-1, owned by the recorder until the next
// Scan; alive reports whether any target still exists.
func (r *Recorder) Scan(k int) (win *trace.Window, alive bool, err error) {
	alive, err = r.scan(k)
	if err != nil || k == 0 {
		return nil, alive, err
	}
	return &r.win, alive, nil
}

// Capture, with --tracker damon, waits for the end of DAMON's current
// aggregation interval (the window) and takes the regions DAMON saw in it,
// for the next Scan; a caller that keeps the window clock itself (mdk
// agent) calls it before each Scan, as [Recorder.Run] does. stopped reports
// that the kdamond is off: it stops by itself when its target exits, and
// the next Scan then finds the process gone. With idle page tracking it
// does nothing.
func (r *Recorder) Capture(ctx context.Context) (stopped bool, err error) {
	if r.damon == nil {
		return false, nil
	}
	err = r.damon.capture(ctx)
	if errors.Is(err, errKdamondStopped) {
		return true, nil
	}
	return false, err
}

// skipMapping reports whether a mapping holds no pages idle tracking can
// follow: the kernel's own pages, which are never on an LRU list.
func skipMapping(m Mapping) bool {
	switch m.Path {
	case "[vsyscall]", "[vvar]", "[vvar_vclock]", "[vdso]":
		return true
	}
	return false
}

// readPages appends the existing (present or swapped) pages of pid, space
// si, to dst, sorted by vpn; with a sample, only the pages it keeps (with
// PagesPhysical the sample applies to page frames, in buildPhysical).
func (r *Recorder) readPages(pid int, si uint32, dst []entry) ([]entry, error) {
	sampled := !r.opt.Sample.All() && r.phys == nil
	maps, err := r.opt.FS.Maps(pid)
	if err != nil {
		return dst, err
	}
	if len(maps) == 0 {
		return dst, errProcessGone // a zombie: mm already released
	}
	pm, err := r.opt.FS.OpenPagemap(pid)
	if err != nil {
		return dst, err
	}
	defer pm.Close()
	for _, m := range maps {
		if skipMapping(m) {
			continue
		}
		first, n := m.Start/4096, (m.End-m.Start)/4096
		for n > 0 {
			c := min(n, pagemapChunk)
			if uint64(cap(r.pme)) < c {
				r.pme = make([]uint64, pagemapChunk)
			}
			buf := r.pme[:c]
			if err := pm.Read(first, buf); err != nil {
				if errors.Is(err, errSearch) {
					return dst, errProcessGone
				}
				return dst, err
			}
			for i, e := range buf {
				if e&(PagemapPresent|PagemapSwapped) == 0 {
					continue
				}
				if sampled && !r.opt.Sample.Keep(trace.Page{Space: si, Page: first + uint64(i)}) {
					continue
				}
				if e&PagemapPresent != 0 && e&PagemapPFNMask == 0 {
					return dst, fmt.Errorf("%w: %s shows present pages without page frame numbers: run as root (reading PFNs needs CAP_SYS_ADMIN)", ErrPermission, pm.name)
				}
				dst = append(dst, entry{vpn: first + uint64(i), pme: e, id: noID})
			}
			first += c
			n -= c
		}
	}
	return dst, nil
}

// markAndRead sets r.want to the idle-bitmap bits of every present page,
// reads those words back into r.got (if read), and writes r.want to mark
// the pages idle. Words are read and written in runs; a run also covers
// gaps of up to runGap words, which cost less than a separate system call
// (zero bits in a write change nothing).
func (r *Recorder) markAndRead(read bool) error {
	clear(r.want)
	var maxWord uint64
	any := false
	for _, s := range r.spaces {
		for _, e := range s.cur {
			if e.pme&PagemapPresent == 0 {
				continue
			}
			pfn := e.pme & PagemapPFNMask
			w := pfn / 64
			if w >= uint64(len(r.want)) {
				n := max(w+1, uint64(len(r.want))*5/4)
				r.want = slices.Grow(r.want, int(n)-len(r.want))[:n]
				r.got = slices.Grow(r.got, int(n)-len(r.got))[:n]
			}
			r.want[w] |= 1 << (pfn % 64)
			maxWord = max(maxWord, w)
			any = true
		}
	}
	if !any {
		return nil
	}
	const runGap = 64
	const maxRun = 1 << 17 // words per system call (1 MiB)
	words := r.want[:maxWord+1]
	for i := 0; i < len(words); {
		if words[i] == 0 {
			i++
			continue
		}
		j, last := i, i // [i, last] holds the run's non-zero words
		for j = i + 1; j < len(words) && j-i < maxRun && j-last <= runGap; j++ {
			if words[j] != 0 {
				last = j
			}
		}
		if err := r.run(uint64(i), uint64(last+1), read); err != nil {
			return err
		}
		i = last + 1
	}
	return nil
}

// run reads back and marks the bitmap words [lo, hi).
func (r *Recorder) run(lo, hi uint64, read bool) error {
	n := int(hi-lo) * 8
	if cap(r.io) < n {
		r.io = make([]byte, n)
	}
	b := r.io[:n]
	off := int64(lo * 8)
	name := r.opt.FS.BitmapPath()
	if read {
		got, err := r.bitmap.ReadAt(b, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read %s at byte %d: %w", name, off, err)
		}
		if got < n-8 || got < n && !r.partialLastWord(hi-1) {
			return fmt.Errorf("%w: %s: short read at byte %d (%d of %d bytes): page frame beyond the kernel's last", ErrFormat, name, off, got, n)
		}
		clear(b[got:]) // the partial last word reads as all accessed
		for i := range hi - lo {
			r.got[lo+i] = binary.NativeEndian.Uint64(b[i*8:])
		}
	}
	for i := range hi - lo {
		binary.NativeEndian.PutUint64(b[i*8:], r.want[lo+i])
	}
	if _, err := r.bitmap.WriteAt(b, off); err != nil {
		// The kernel marks the frames of a partial last word but does not
		// count the word as written: the write of that word returns 0, which
		// os.File.WriteAt reports as io.ErrUnexpectedEOF (and a count of 0
		// for the whole call, however much was written before).
		if !(errors.Is(err, io.ErrUnexpectedEOF) && r.partialLastWord(hi-1)) {
			return fmt.Errorf("write %s at byte %d: %w", name, off, err)
		}
	}
	return nil
}

// partialLastWord reports whether bitmap word w may be the kernel's partial
// last word: when the number of page frames (max_pfn) is not a multiple of
// 64, the kernel's page_idle_bitmap_read and _write handle the frames of the
// last, partial 64-frame word but return only the bytes of whole words, so
// that word's idle bits cannot be read back. Only the highest word holding
// a present page can be it; its pages read as accessed in every window,
// which the recorder logs once.
func (r *Recorder) partialLastWord(w uint64) bool {
	if w+1 != uint64(len(r.want)) && slices.ContainsFunc(r.want[w+1:], func(x uint64) bool { return x != 0 }) {
		return false
	}
	if !r.partialWarned {
		r.partialWarned = true
		fmt.Fprintf(r.opt.Log, "mdk record: warning: page frames %d-%d are in the kernel's partial last idle-bitmap word, whose bits it does not return: their pages are reported accessed in every window\n", w*64, w*64+63)
	}
	return true
}

// wasAccessed reports whether the present page e was accessed since the
// previous scan: its frame lost its idle bit, or (DAMON) it lies in a region
// seen accessed.
func (r *Recorder) wasAccessed(e entry) bool {
	if r.damon != nil {
		return r.damon.accessed(e.vpn)
	}
	return !r.idle(e)
}

// idle reports whether the page frame of e still has its idle bit.
func (r *Recorder) idle(e entry) bool {
	pfn := e.pme & PagemapPFNMask
	return r.got[pfn/64]&(1<<(pfn%64)) != 0
}

// announce gives e a dense ID if it has none.
func (r *Recorder) announce(sp uint32, e *entry) uint32 {
	if e.id != noID {
		return e.id
	}
	p := trace.Page{Space: sp, Page: e.vpn}
	id, ok := r.ids[p]
	if !ok {
		id = uint32(r.pages)
		r.pages++
		r.ids[p] = id
		r.win.New = append(r.win.New, p)
	}
	e.id = id
	return id
}

// compare merges s.prev (scan k-1) and s.cur (scan k) into r.win. first is
// set for window 0, where every page of scan 0 is born.
func (r *Recorder) compare(sp uint32, s *space, first bool) {
	prev, cur := s.prev, s.cur
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		switch {
		case j == len(cur) || i < len(prev) && prev[i].vpn < cur[j].vpn:
			// gone since the previous scan
			p := &prev[i]
			if first {
				r.win.Born = append(r.win.Born, r.announce(sp, p))
			}
			r.win.Freed = append(r.win.Freed, r.announce(sp, p))
			i++
		case i == len(prev) || cur[j].vpn < prev[i].vpn:
			// new since the previous scan
			c := &cur[j]
			r.win.Born = append(r.win.Born, r.announce(sp, c))
			j++
		default:
			p, c := &prev[i], &cur[j]
			if first {
				r.win.Born = append(r.win.Born, r.announce(sp, p))
			}
			c.id = r.announce(sp, p)
			if c.pme&PagemapPresent != 0 {
				if p.pme&PagemapPresent == 0 || r.wasAccessed(*c) {
					r.win.Accessed = append(r.win.Accessed, c.id)
				}
			}
			i++
			j++
		}
	}
}

// RecordFile records to the trace file out, in the format its extension
// names, and returns the summary. The file is written beside out and
// renamed to out once the first window is complete, so a recording that
// fails before that leaves an existing out as it was. On a clean end
// (duration, targets exited, ctx) it rewrites the file once more so that
// the header's description also holds the cost summary and every space's
// pid; if the recorder is killed, the file holds every completed window
// with the description known at the start.
func (r *Recorder) RecordFile(ctx context.Context, out string) (Summary, error) {
	tf, err := newTraceFile(out)
	if err != nil {
		return Summary{}, err
	}
	sum, err := r.Run(ctx, tf.newWriter)
	if err = tf.finish(err); err != nil {
		return sum, err
	}
	if tf.f == nil {
		return sum, nil
	}
	if ferr := finalize(out, tf.format, r.header().Source+"; "+sum.String()); ferr != nil {
		fmt.Fprintf(r.opt.Log, "mdk record: warning: could not add the summary to %s: %v (the trace itself is complete)\n", out, ferr)
	}
	return sum, nil
}

// finalize rewrites the trace at path with source as its description.
func finalize(path string, format *trace.Format, source string) error {
	rd, c, err := trace.Open(path)
	if err != nil {
		return err
	}
	defer c.Close()
	h := rd.Header()
	h.Source = source
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	w, err := format.NewWriter(f, h)
	if err == nil {
		_, err = trace.Copy(w, rd)
	}
	if err != nil {
		return err
	}
	return f.Commit()
}
