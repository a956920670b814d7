package linux

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
)

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
	KPFLRU         = 5
	KPFUnevictable = 18
	KPFTHP         = 22
	KPFMlocked     = 33 // KPF_MLOCKED, one of the kernel-hacking flags
)

// RefusalOf tells why a page stayed present, from its kpageflags and
// kpagecount words.
func RefusalOf(flags, count uint64) Refusal {
	switch {
	case flags&(1<<KPFUnevictable|1<<KPFMlocked) != 0:
		return RefusedLocked
	case flags&(1<<KPFTHP) != 0:
		return RefusedHuge
	case count > 1:
		return RefusedShared
	case flags&(1<<KPFLRU) == 0:
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

// Refusal reads the flags of the page with pagemap entry pm. A nil
// PageFlags answers RefusedUnreadable.
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
