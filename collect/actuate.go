package collect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IOVMax is the most iovecs one process_madvise call takes (the kernel's
// UIO_MAXIOV, the IOV_MAX of limits.h); [Actuator.PageOut] never passes more.
const IOVMax = 1024

// Run is a run of consecutive virtual pages, first .. first+n-1, as one
// iovec of a process_madvise call.
type Run struct {
	First uint64 // virtual page number (address / page size)
	N     uint64 // pages
}

// Runs sorts vpns and merges consecutive page numbers into runs; duplicates
// are dropped. It reuses dst.
func Runs(dst []Run, vpns []uint64) []Run {
	dst = dst[:0]
	slices.Sort(vpns)
	for i, v := range vpns {
		if i > 0 && v == vpns[i-1] {
			continue
		}
		if n := len(dst); n > 0 && dst[n-1].First+dst[n-1].N == v {
			dst[n-1].N++
			continue
		}
		dst = append(dst, Run{First: v, N: 1})
	}
	return dst
}

// PageOutStats is what one [Actuator.PageOut] did.
type PageOutStats struct {
	Runs     int   // iovecs passed in total
	Syscalls int   // process_madvise calls
	Bytes    int64 // bytes the kernel reported as advised
}

// Refusal is why a page is still present after MADV_PAGEOUT, as far as
// /proc/kpageflags and /proc/kpagecount can tell.
type Refusal uint8

const (
	RefusedUnknown    Refusal = iota // on the LRU, private, not locked: no reason visible (raced with an access)
	RefusedShared                    // mapped by more than one process (kpagecount > 1)
	RefusedLocked                    // mlocked or unevictable (KPF_MLOCKED, KPF_UNEVICTABLE)
	RefusedHuge                      // part of a transparent huge page (KPF_THP)
	RefusedNotLRU                    // not on an LRU list: still in a per-CPU batch (no KPF_LRU)
	RefusedUnreadable                // kpageflags not readable (not root, or no PFN in pagemap)
	NumRefusals                      // the number of reasons
)

var refusalNames = [NumRefusals]string{"unknown", "shared", "locked", "thp", "not_lru", "unreadable"}

// String returns the reason's name as in measured.csv: "shared".
func (r Refusal) String() string {
	if r < NumRefusals {
		return refusalNames[r]
	}
	return "Refusal(" + strconv.Itoa(int(r)) + ")"
}

// /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst).
const (
	kpfLRU         = 5
	kpfTHP         = 22
	kpfUnevictable = 18
	kpfMlocked     = 33 // KPF_MLOCKED, one of the kernel-hacking flags
)

// RefusalOf tells why the page with pagemap entry pm stayed present, from
// its kpageflags and kpagecount words.
func RefusalOf(flags, count uint64) Refusal {
	switch {
	case flags&(1<<kpfUnevictable|1<<kpfMlocked) != 0:
		return RefusedLocked
	case flags&(1<<kpfTHP) != 0:
		return RefusedHuge
	case count > 1:
		return RefusedShared
	case flags&(1<<kpfLRU) == 0:
		return RefusedNotLRU
	}
	return RefusedUnknown
}

// PageFlags reads /proc/kpageflags and /proc/kpagecount (root only) to tell
// why present pages were refused.
type PageFlags struct {
	flags, count *os.File
}

// OpenPageFlags opens /proc/kpageflags and /proc/kpagecount.
func (fsys FS) OpenPageFlags() (*PageFlags, error) {
	f, err := os.Open(filepath.Join(fsys.Proc, "kpageflags"))
	if err != nil {
		return nil, err
	}
	c, err := os.Open(filepath.Join(fsys.Proc, "kpagecount"))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &PageFlags{flags: f, count: c}, nil
}

// Close closes both files.
func (p *PageFlags) Close() error {
	err := p.flags.Close()
	if cerr := p.count.Close(); err == nil {
		err = cerr
	}
	return err
}

// Refusal reads the flags of the page with pagemap entry pm.
func (p *PageFlags) Refusal(pm uint64) Refusal {
	pfn := pm & PagemapPFNMask
	if p == nil || pm&PagemapPresent == 0 || pfn == 0 {
		return RefusedUnreadable
	}
	var b [8]byte
	if _, err := p.flags.ReadAt(b[:], int64(pfn*8)); err != nil {
		return RefusedUnreadable
	}
	flags := binary.NativeEndian.Uint64(b[:])
	if _, err := p.count.ReadAt(b[:], int64(pfn*8)); err != nil {
		return RefusedUnreadable
	}
	return RefusalOf(flags, binary.NativeEndian.Uint64(b[:]))
}

// ZramStat is /sys/block/zramN/mm_stat (Documentation/admin-guide/blockdev/zram.rst):
//
//	8192     2375    12288        0    12288        0        0        0        0
type ZramStat struct {
	OrigDataBytes  int64 // uncompressed size of the data stored
	ComprDataBytes int64 // compressed size of the data stored
	MemUsedBytes   int64 // memory the device allocated, overhead included
	SamePages      int64 // pages filled with one value, stored without memory
	HugePages      int64 // incompressible pages, stored uncompressed
}

// ParseZramStat parses the text of mm_stat; name is used in errors.
func ParseZramStat(b []byte, name string) (ZramStat, error) {
	f := strings.Fields(string(b))
	if len(f) < 6 {
		return ZramStat{}, fmt.Errorf("%w: %s: expected at least 6 numbers, got %d", ErrFormat, name, len(f))
	}
	v := make([]int64, len(f))
	for i, s := range f {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return ZramStat{}, fmt.Errorf("%w: %s: field %d: expected an integer, got %q", ErrFormat, name, i+1, s)
		}
		v[i] = n
	}
	z := ZramStat{OrigDataBytes: v[0], ComprDataBytes: v[1], MemUsedBytes: v[2], SamePages: v[5]}
	if len(v) >= 8 {
		z.HugePages = v[7]
	}
	return z, nil
}

// ZramStat reads the mm_stat of the zram device dev ("zram1").
func (fsys FS) ZramStat(dev string) (ZramStat, error) {
	path := filepath.Join(fsys.Sys, "block", dev, "mm_stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return ZramStat{}, err
	}
	return ParseZramStat(b, path)
}

// KeyValues reads a file of "key value" lines (/proc/vmstat, a cgroup's
// memory.stat) and returns the values of the keys asked for; a key absent
// from the file is absent from the map, so that "not on this kernel" is
// told apart from zero.
func KeyValues(path string, keys ...string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return parseKeyValues(b, path, keys)
}

func parseKeyValues(b []byte, name string, keys []string) (map[string]int64, error) {
	out := make(map[string]int64, len(keys))
	for i, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok || !slices.Contains(keys, k) {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %s: expected an integer, got %q", ErrFormat, name, i+1, k, v)
		}
		out[k] = n
	}
	return out, nil
}

// SwapDevice is one line of /proc/swaps.
type SwapDevice struct {
	Filename  string
	SizeBytes int64
	UsedBytes int64
	Priority  int
}

// Swaps reads /proc/swaps.
func (fsys FS) Swaps() ([]SwapDevice, error) {
	path := filepath.Join(fsys.Proc, "swaps")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSwaps(b, path)
}

// parseSwaps parses /proc/swaps:
//
//	Filename				Type		Size		Used		Priority
//	/dev/zram1                              partition	65532		0		100
func parseSwaps(b []byte, name string) ([]SwapDevice, error) {
	var out []SwapDevice
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) == 0 {
			continue
		}
		if len(f) < 5 {
			return nil, fmt.Errorf("%w: %s:%d: expected 5 fields, got %d", ErrFormat, name, i+1, len(f))
		}
		var n [3]int64
		for j := range n {
			v, err := strconv.ParseInt(f[2+j], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: %s:%d: field %d: expected an integer, got %q", ErrFormat, name, i+1, 3+j, f[2+j])
			}
			n[j] = v
		}
		out = append(out, SwapDevice{Filename: f[0], SizeBytes: n[0] * 1024, UsedBytes: n[1] * 1024, Priority: int(n[2])})
	}
	return out, nil
}

// ErrNoSwap is returned by reclaiming code when no swap device is active:
// MADV_PAGEOUT of anonymous memory then does nothing.
var ErrNoSwap = errors.New("collect: no swap device is active (see /proc/swaps); anonymous pages cannot be reclaimed")

// CPUTime returns the user+system CPU time this process has used so far
// (every thread), 0 where it cannot be read.
func CPUTime() time.Duration { return cpuTime() }
