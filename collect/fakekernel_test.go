package collect

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"mdk/linux"
)

// fakeKernel is a faithful stand-in for the kernel files the recorder uses,
// in a temporary directory: /proc/PID/maps (text), /proc/PID/pagemap
// (binary, one host-endian u64 per virtual page: present bit 63, swapped bit
// 62, PFN bits 0-54), and /sys/kernel/mm/page_idle/bitmap, a real file of
// maxPFN bits. The recorder reaches the bitmap through fakeBitmap, which
// enforces the kernel's rules: 8-byte granularity (EINVAL), short reads at
// the end, ENXIO for writes past the last frame, and OR-ed writes (a write
// only sets idle flags). The test drives the "kernel" between scans: an
// access clears the frame's idle bit, like the kernel's rmap walk does.
type fakeKernel struct {
	t      testing.TB
	root   string
	proc   string
	sys    string
	maxPFN uint64

	mu      sync.Mutex
	bitmap  *os.File
	nextPFN uint64
	procs   map[int]*fakeProc
	reads   int // bitmap reads and writes seen
	writes  int
}

type fakeProc struct {
	vmas  [][2]uint64       // [start, end) virtual page numbers, sorted
	names map[uint64]string // start vpn -> path in maps
	pme   map[uint64]uint64 // vpn -> pagemap entry
}

func newFakeKernel(t testing.TB, maxPFN uint64) *fakeKernel {
	t.Helper()
	root := t.TempDir()
	k := &fakeKernel{t: t, root: root, proc: filepath.Join(root, "proc"), sys: filepath.Join(root, "sys"),
		maxPFN: maxPFN, nextPFN: 0x1000, procs: map[int]*fakeProc{}}
	dir := filepath.Join(k.sys, "kernel/mm/page_idle")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "bitmap"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64((maxPFN + 63) / 64 * 8)); err != nil {
		t.Fatal(err)
	}
	k.bitmap = f
	t.Cleanup(func() { f.Close() })
	if err := os.MkdirAll(k.proc, 0o755); err != nil {
		t.Fatal(err)
	}
	return k
}

// FS returns an FS on the fake tree whose bitmap goes through fakeBitmap.
func (k *fakeKernel) FS() linux.FS {
	fsys := linux.NewFS(k.proc, k.sys)
	fsys.OpenBitmap = func(path string) (linux.BitmapFile, error) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		return &fakeBitmap{k: k, f: f}, nil
	}
	return fsys
}

// fakeBitmap is the recorder's view of the bitmap file, with the kernel's
// semantics (mm/page_idle.c page_idle_bitmap_read/write).
type fakeBitmap struct {
	k *fakeKernel
	f *os.File
}

func (b *fakeBitmap) ReadAt(p []byte, off int64) (int, error) {
	k := b.k
	k.mu.Lock()
	defer k.mu.Unlock()
	k.reads++
	if off%8 != 0 || len(p)%8 != 0 {
		return 0, syscall.EINVAL
	}
	if uint64(off)*8 >= k.maxPFN {
		return 0, io.EOF
	}
	// Only whole 64-frame words are returned: the bits of a partial last
	// word (maxPFN not a multiple of 64) are computed but not counted.
	n := min(uint64(len(p)), k.maxPFN/64*8-uint64(off))
	if n == 0 {
		return 0, io.EOF
	}
	return b.f.ReadAt(p[:n], off)
}

func (b *fakeBitmap) WriteAt(p []byte, off int64) (int, error) {
	k := b.k
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writes++
	if off%8 != 0 || len(p)%8 != 0 {
		return 0, syscall.EINVAL
	}
	if uint64(off)*8 >= k.maxPFN {
		return 0, syscall.ENXIO
	}
	// The frames of a partial last word are marked, but only whole words
	// count as written; the kernel's write of that word returns 0, and
	// os.File.WriteAt reports io.ErrUnexpectedEOF with a count of 0.
	n := min(uint64(len(p)), (k.maxPFN+63)/64*8-uint64(off))
	old := make([]byte, n)
	if _, err := b.f.ReadAt(old, off); err != nil {
		return 0, err
	}
	for i := range old {
		old[i] |= p[i] // writes only set idle flags
	}
	if _, err := b.f.WriteAt(old, off); err != nil {
		return 0, err
	}
	if whole := k.maxPFN/64*8 - uint64(off); whole < uint64(len(p)) {
		return 0, io.ErrUnexpectedEOF // what os.File.WriteAt returns then
	}
	return len(p), nil
}

func (b *fakeBitmap) Close() error { return b.f.Close() }

// bit returns the idle bit of pfn.
func (k *fakeKernel) bit(pfn uint64) bool {
	var w [8]byte
	if _, err := k.bitmap.ReadAt(w[:], int64(pfn/64*8)); err != nil {
		k.t.Fatal(err)
	}
	return binary.NativeEndian.Uint64(w[:])&(1<<(pfn%64)) != 0
}

func (k *fakeKernel) setBit(pfn uint64, idle bool) {
	var w [8]byte
	off := int64(pfn / 64 * 8)
	if _, err := k.bitmap.ReadAt(w[:], off); err != nil {
		k.t.Fatal(err)
	}
	v := binary.NativeEndian.Uint64(w[:])
	if idle {
		v |= 1 << (pfn % 64)
	} else {
		v &^= 1 << (pfn % 64)
	}
	binary.NativeEndian.PutUint64(w[:], v)
	if _, err := k.bitmap.WriteAt(w[:], off); err != nil {
		k.t.Fatal(err)
	}
}

func (k *fakeKernel) allocPFN() uint64 {
	pfn := k.nextPFN
	k.nextPFN += 7 // spread frames over several bitmap words
	if k.nextPFN >= k.maxPFN {
		k.t.Fatal("fake kernel out of page frames")
	}
	return pfn
}

// spawn creates process pid with no mappings.
func (k *fakeKernel) spawn(pid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.procs[pid] = &fakeProc{names: map[uint64]string{}, pme: map[uint64]uint64{}}
	if err := os.MkdirAll(filepath.Join(k.proc, strconv.Itoa(pid)), 0o755); err != nil {
		k.t.Fatal(err)
	}
	k.sync(pid)
}

// mmap adds the mapping [start, start+n) (virtual page numbers) and faults
// in the pages listed in present (fresh frames, not idle).
func (k *fakeKernel) mmap(pid int, start, n uint64, name string, present ...uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.procs[pid]
	p.vmas = append(p.vmas, [2]uint64{start, start + n})
	slices.SortFunc(p.vmas, func(a, b [2]uint64) int { return int(a[0]) - int(b[0]) })
	p.names[start] = name
	for _, v := range present {
		k.fault(p, v)
	}
	k.sync(pid)
}

func (k *fakeKernel) fault(p *fakeProc, vpn uint64) {
	pfn := k.allocPFN()
	k.setBit(pfn, false)
	p.pme[vpn] = linux.PagemapPresent | pfn
}

// munmap removes the mapping starting at start and its pages.
func (k *fakeKernel) munmap(pid int, start uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.procs[pid]
	i := slices.IndexFunc(p.vmas, func(v [2]uint64) bool { return v[0] == start })
	for v := p.vmas[i][0]; v < p.vmas[i][1]; v++ {
		delete(p.pme, v)
	}
	p.vmas = slices.Delete(p.vmas, i, i+1)
	k.sync(pid)
}

// touch is an access by the process: a page not present is faulted in; a
// present page's frame loses its idle bit.
func (k *fakeKernel) touch(pid int, vpns ...uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.procs[pid]
	for _, v := range vpns {
		e, ok := p.pme[v]
		switch {
		case ok && e&linux.PagemapPresent != 0:
			k.setBit(e&linux.PagemapPFNMask, false)
		default: // fault in (or swap in): a fresh frame
			k.fault(p, v)
		}
	}
	k.sync(pid)
}

// zap removes single pages (MADV_DONTNEED).
func (k *fakeKernel) zap(pid int, vpns ...uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, v := range vpns {
		delete(k.procs[pid].pme, v)
	}
	k.sync(pid)
}

// swapOut reclaims a page to swap: the entry becomes swapped (type and
// offset in the low bits, no PFN) and the frame is freed with its idle bit
// left as it was.
func (k *fakeKernel) swapOut(pid int, vpn uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.procs[pid].pme[vpn] = linux.PagemapSwapped | 0x5<<5 | 0x1 // offset 5, type 1
	k.sync(pid)
}

// migrate moves a page to a new frame, copying its idle flag as the
// kernel's folio_migrate_flags does.
func (k *fakeKernel) migrate(pid int, vpn uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := k.procs[pid]
	old := p.pme[vpn] & linux.PagemapPFNMask
	pfn := k.allocPFN()
	k.setBit(pfn, k.bit(old))
	p.pme[vpn] = linux.PagemapPresent | pfn
	k.sync(pid)
}

// cow replaces a page's frame by a fresh copy (a write to a shared page).
func (k *fakeKernel) cow(pid int, vpn uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fault(k.procs[pid], vpn)
	k.sync(pid)
}

// exit removes the process.
func (k *fakeKernel) exit(pid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.procs, pid)
	if err := os.RemoveAll(filepath.Join(k.proc, strconv.Itoa(pid))); err != nil {
		k.t.Fatal(err)
	}
}

// sync writes the maps and pagemap files of pid.
func (k *fakeKernel) sync(pid int) {
	p := k.procs[pid]
	dir := filepath.Join(k.proc, strconv.Itoa(pid))
	var maps strings.Builder
	for _, v := range p.vmas {
		fmt.Fprintf(&maps, "%08x-%08x rw-p 00000000 00:00 0", v[0]*4096, v[1]*4096)
		if n := p.names[v[0]]; n != "" {
			fmt.Fprintf(&maps, "                          %s", n)
		}
		maps.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "maps"), []byte(maps.String()), 0o644); err != nil {
		k.t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "pagemap"), os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		k.t.Fatal(err)
	}
	defer f.Close()
	vpns := make([]uint64, 0, len(p.pme))
	for v := range p.pme {
		vpns = append(vpns, v)
	}
	sort.Slice(vpns, func(i, j int) bool { return vpns[i] < vpns[j] })
	var e [8]byte
	for _, v := range vpns {
		binary.NativeEndian.PutUint64(e[:], p.pme[v])
		if _, err := f.WriteAt(e[:], int64(v*8)); err != nil {
			k.t.Fatal(err)
		}
	}
	// The real pagemap covers the whole address space; end the file after
	// the last mapping so reads in every mapping see whole entries.
	if n := len(p.vmas); n > 0 {
		if err := f.Truncate(int64(p.vmas[n-1][1] * 8)); err != nil {
			k.t.Fatal(err)
		}
	}
}
