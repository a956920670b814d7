package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
const (
	PagemapPresent = 1 << 63
	PagemapSwapped = 1 << 62
	PagemapPFNMask = 1<<55 - 1 // bits 0-54: page frame number when present
)

// Pagemap is an open /proc/PID/pagemap: one host-endian u64 per
// virtual page, at offset vpn*8.
type Pagemap struct {
	f    io.ReaderAt
	c    io.Closer
	name string
	buf  []byte
}

// OpenPagemap opens /proc/PID/pagemap.
func (fsys FS) OpenPagemap(pid int) (*Pagemap, error) {
	path := fsys.PIDPath(pid, "pagemap")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &Pagemap{f: f, c: f, name: path}, nil
}

// NewPagemap reads pagemap entries from r; name is used in errors. Tests
// and fuzzers use it on fixtures.
func NewPagemap(r io.ReaderAt, name string) *Pagemap {
	return &Pagemap{f: r, c: io.NopCloser(nil), name: name}
}

// Name is the file's path, for messages.
func (pm *Pagemap) Name() string { return pm.name }

// Close closes the file.
func (pm *Pagemap) Close() error { return pm.c.Close() }

// PagemapChunk is the number of entries one read system call fetches at
// most.
const PagemapChunk = 8192

// Read returns the entries of the virtual pages first .. first+len(dst)-1
// into dst. Entries past the end of the file read as zero (not mapped).
// Once the process is gone it returns an error wrapping ErrNoProcess.
func (pm *Pagemap) Read(first uint64, dst []uint64) error {
	if first > (1<<63-1)/8-uint64(len(dst)) {
		return fmt.Errorf("%w: %s: virtual page %#x out of range", ErrFormat, pm.name, first)
	}
	for len(dst) > 0 {
		n := min(len(dst), PagemapChunk)
		if cap(pm.buf) < n*8 {
			pm.buf = make([]byte, PagemapChunk*8)
		}
		b := pm.buf[:n*8]
		off := int64(first * 8)
		got, err := pm.f.ReadAt(b, off)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errSearch) {
				return fmt.Errorf("%w: read %s at byte %d: %v", ErrNoProcess, pm.name, off, err)
			}
			return fmt.Errorf("read %s at byte %d: %w", pm.name, off, err)
		}
		if got%8 != 0 {
			return fmt.Errorf("%w: %s: short read of %d bytes at byte %d (entries are 8 bytes)", ErrFormat, pm.name, got, off)
		}
		clear(b[got:])
		for i := range n {
			dst[i] = binary.NativeEndian.Uint64(b[i*8:])
		}
		dst = dst[n:]
		first += uint64(n)
	}
	return nil
}
