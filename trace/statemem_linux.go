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
type stateMem struct {
	b []byte // the mapping; nil before the first grow or after a failure
}

// stateAlign rounds mappings to 2 MiB.
const stateAlign = 2 << 20

// grow returns the mapping with room for n bytes, zero beyond what it held,
// or false if the system refuses (the caller then uses the heap).
func (m *stateMem) grow(n int) ([]byte, bool) {
	if n <= len(m.b) {
		return m.b, true
	}
	size := max(n+n/4, stateAlign)
	size = (size + stateAlign - 1) &^ (stateAlign - 1)
	var b []byte
	var err error
	if m.b == nil {
		b, err = unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	} else {
		b, err = unix.Mremap(m.b, size, unix.MREMAP_MAYMOVE)
	}
	if err != nil {
		return nil, false
	}
	m.b = b
	return b, true
}

// release unmaps the mapping.
func (m *stateMem) release() {
	if m.b != nil {
		unix.Munmap(m.b)
		m.b = nil
	}
}

// words views b as words of S.
func words[S uint32 | uint64](b []byte, n int) []S {
	return unsafe.Slice((*S)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
