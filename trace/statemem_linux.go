package trace

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// stateMem holds a walker's page state outside the Go heap, in an anonymous
// mapping that grows with mremap: the kernel moves the pages rather than
// copying them, so growing costs neither a copy nor a second array until
// the garbage collector runs (the state is most of the generator's
// memory). Untouched pages of the mapping take no memory.
//
// A state larger than a huge page (hugeMin) moves to transparent huge pages
// where the system gives them on request: the walk's loads spread over the
// whole state, more 4 KiB pages than the TLB holds (17 MB of state for the
// benchmark trace's 4.25 M pages), and 2 MiB pages take far fewer TLB
// entries and page faults. Smaller states keep 4 KiB pages, even where the
// system maps huge pages unasked: a huge page takes 2 MiB of memory however
// little of it is touched (a trace of 100 partitions has 100 states of
// about 170 KB), and the pages of a state that small fit in the TLB (a
// partition's state is walked a window at a time).
type stateMem struct {
	b    []byte // the mapping; nil before the first grow or after a failure
	used int    // bytes asked for so far: b beyond them is untouched
	huge bool   // b is advised to use huge pages
}

// stateAlign rounds mappings to 2 MiB, the size of a huge page on amd64 and
// arm64 (4 KiB base pages): a mapping of a multiple of it is aligned to it.
const stateAlign = 2 << 20

// hugeMin is the least state that is put in huge pages: the rounding up to
// whole huge pages then costs under 2 MiB a state, less than the state.
// The advice is given whatever the system's setting: where transparent
// huge pages are "never" the kernel ignores it, and the state's one move
// at hugeMin is a copy of 2 MiB. (Asking the system first would mean
// reading /sys here, and package linux owns the kernel's files.)
const hugeMin = stateAlign

// grow returns the mapping with room for n bytes, zero beyond what it held,
// or false if the system refuses (the caller then uses the heap). The
// mapping may move: the caller must use the returned bytes only.
func (m *stateMem) grow(n int) ([]byte, bool) {
	if n <= len(m.b) {
		if !m.huge && n >= hugeMin {
			// Faulted in 4 KiB pages already, the state stays in them
			// if only advised: move it to a new mapping that is.
			if b, ok := m.mapNew(len(m.b), true); ok {
				copy(b, m.b[:m.used])
				unix.Munmap(m.b)
				m.b = b
			}
		}
		m.used = max(m.used, n)
		return m.b, true
	}
	size := max(n+n/4, stateAlign)
	size = (size + stateAlign - 1) &^ (stateAlign - 1)
	huge := n >= hugeMin
	var b []byte
	if m.b == nil || huge && !m.huge {
		var ok bool
		if b, ok = m.mapNew(size, huge); !ok {
			return nil, false
		}
		if m.b != nil {
			copy(b, m.b[:m.used])
			unix.Munmap(m.b)
		}
	} else {
		// The mapping keeps its advice as it grows.
		var err error
		if b, err = unix.Mremap(m.b, size, unix.MREMAP_MAYMOVE); err != nil {
			return nil, false
		}
	}
	m.b, m.used = b, n
	return b, true
}

// mapNew maps size bytes, advised to use huge pages or not to; m.huge
// records the advice.
func (m *stateMem) mapNew(size int, huge bool) ([]byte, bool) {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, false
	}
	advice := unix.MADV_NOHUGEPAGE
	if huge {
		advice = unix.MADV_HUGEPAGE
	}
	_ = unix.Madvise(b, advice) // without it, the system's default pages
	m.huge = huge
	return b, true
}

// release unmaps the mapping.
func (m *stateMem) release() {
	if m.b != nil {
		unix.Munmap(m.b)
		m.b, m.used, m.huge = nil, 0, false
	}
}

// words views b as words of S.
func words[S uint32 | uint64](b []byte, n int) []S {
	return unsafe.Slice((*S)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
