package collect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"mdk/linux"
	"mdk/trace"
)

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
	cpu0 := linux.CPUTime()
	r.scanK = k
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
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errProcessGone) || errors.Is(err, linux.ErrNoProcess):
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
	c := Cost{Scan: time.Since(t0), CPU: linux.CPUTime() - cpu0, Pages: pages}
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
	if errors.Is(err, linux.ErrKdamondStopped) {
		return true, nil
	}
	return false, err
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
	r.noteMaps(si, maps)
	ps := uint64(linux.PageSize())
	pm, err := r.opt.FS.OpenPagemap(pid)
	if err != nil {
		return dst, err
	}
	defer pm.Close()
	for _, m := range maps {
		if m.Kernel() {
			continue
		}
		first, n := m.Start/ps, (m.End-m.Start)/ps
		for n > 0 {
			c := min(n, linux.PagemapChunk)
			if uint64(cap(r.pme)) < c {
				r.pme = make([]uint64, linux.PagemapChunk)
			}
			buf := r.pme[:c]
			if err := pm.Read(first, buf); err != nil {
				if errors.Is(err, linux.ErrNoProcess) {
					return dst, errProcessGone
				}
				return dst, err
			}
			for i, e := range buf {
				if e&(linux.PagemapPresent|linux.PagemapSwapped) == 0 {
					continue
				}
				if sampled && !r.opt.Sample.Keep(trace.Page{Space: si, Page: first + uint64(i)}) {
					continue
				}
				if e&linux.PagemapPresent != 0 && e&linux.PagemapPFNMask == 0 {
					return dst, fmt.Errorf("%w: %s shows present pages without page frame numbers: run as root (reading PFNs needs CAP_SYS_ADMIN)", linux.ErrPermission, pm.Name())
				}
				dst = append(dst, entry{vpn: first + uint64(i), pme: e, id: noID})
			}
			first += c
			n -= c
		}
	}
	return dst, nil
}

// Pagemap fills, after a Scan, entries[id] with the pagemap entry this scan
// read for trace page id (0 for a page neither present nor swapped, or past
// len(entries)) and gone[s] with whether space s's process is gone, for a
// caller that measures through the same read (mdk agent): one pagemap read
// per window serves both. With PagesPhysical there are no virtual pages to
// report and entries stay zero.
func (r *Recorder) Pagemap(entries []uint64, gone []bool) {
	clear(entries)
	for si, s := range r.spaces {
		if si < len(gone) {
			gone[si] = s.gone
		}
		if r.phys != nil {
			continue
		}
		for _, e := range s.prev {
			if e.id != noID && int(e.id) < len(entries) {
				entries[e.id] = e.pme
			}
		}
	}
}

// noteMaps records the mappings of space si seen at the current scan that
// were not seen before: scan k shows window k-1's end (window 0 for scan
// 0). At most trace.MaxMappings are kept; beyond them a warning says the
// sidecar is incomplete.
func (r *Recorder) noteMaps(si uint32, maps []linux.Mapping) {
	if r.mapSeen == nil {
		r.mapSeen = map[trace.Mapping]bool{}
	}
	for _, m := range maps {
		tm := trace.Mapping{Space: si, Start: m.Start, End: m.End, Perms: m.Perms, Offset: m.Offset, Path: m.Path}
		if r.mapSeen[tm] || strings.ContainsRune(tm.Path, '\n') {
			continue
		}
		if len(r.mappings) == trace.MaxMappings {
			if !r.mapsFull {
				r.mapsFull = true
				fmt.Fprintf(r.opt.Log, "mdk record: warning: more than %d mappings; the mappings sidecar holds the first ones only\n", trace.MaxMappings)
			}
			return
		}
		r.mapSeen[tm] = true
		tm.Window = max(r.scanK-1, 0)
		r.mappings = append(r.mappings, tm)
	}
}

// Mappings returns every mapping of the targets seen so far, in the order
// first seen, with the window of its first scan (trace.Mapping.Window).
func (r *Recorder) Mappings() []trace.Mapping { return r.mappings }
