package linux

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// BitmapFile is the open /sys/kernel/mm/page_idle/bitmap. As in the kernel,
// offsets and lengths must be multiples of 8 (else EINVAL), a read past the
// last page frame returns fewer bytes (0 and io.EOF at or past it), and a
// write sets the idle flags of the pages whose bits are 1, ignoring zero
// bits. Bit f%64 of word f/64 is page frame f.
type BitmapFile interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

func openBitmapFile(path string) (BitmapFile, error) {
	return os.OpenFile(path, os.O_RDWR, 0)
}

// BitmapPath returns the path of the idle page bitmap.
func (fsys FS) BitmapPath() string {
	return filepath.Join(fsys.Sys, "kernel/mm/page_idle/bitmap")
}

// IdleBitmap opens the idle page bitmap, with errors that say what to do.
func (fsys FS) IdleBitmap() (BitmapFile, error) {
	path := fsys.BitmapPath()
	open := fsys.OpenBitmap
	if open == nil {
		open = openBitmapFile
	}
	f, err := open(path)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s is missing (kernel built without CONFIG_IDLE_PAGE_TRACKING): record on a kernel with it, or use --exact", ErrNoIdleTrack, path)
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("%w: cannot open %s: run as root (idle page tracking needs CAP_SYS_ADMIN)", ErrPermission, path)
	}
	return nil, fmt.Errorf("open idle bitmap: %w", err)
}

// MGLRUEnabled reports whether the multi-generational LRU is on
// (/sys/kernel/mm/lru_gen/enabled holds a non-zero mask such as "0x0007").
// A kernel without MGLRU reports false.
func (fsys FS) MGLRUEnabled() (bool, error) {
	b, err := os.ReadFile(filepath.Join(fsys.Sys, "kernel/mm/lru_gen/enabled"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return ParseMGLRU(b), nil
}

// ParseMGLRU parses lru_gen/enabled: a hex mask ("0x0007"), or "y"/"n" on
// some kernels.
func ParseMGLRU(b []byte) bool {
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		return s == "y" || s == "Y"
	}
	return v != 0
}
