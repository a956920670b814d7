package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Errors of the kernel's interfaces, wrapped with the details of each
// case; match them with errors.Is.
var (
	// ErrNotSupported: the platform or the running kernel lacks the
	// interface (not Linux, a kernel too old, a config option off).
	ErrNotSupported = errors.New("not supported on this platform")
	ErrNoIdleTrack  = errors.New("no idle page tracking")
	ErrPermission   = errors.New("permission denied")
	ErrNoProcess    = errors.New("no such process")
	ErrFormat       = errors.New("malformed kernel file")
	// ErrNoDamon: the kernel has no usable DAMON sysfs interface, or every
	// kdamond is someone else's.
	ErrNoDamon = errors.New("no DAMON")
	// ErrNoSwap: no swap device is active, so MADV_PAGEOUT of anonymous
	// memory does nothing.
	ErrNoSwap = errors.New("no swap device is active (see /proc/swaps); anonymous pages cannot be reclaimed")
)

// The mount points of the running kernel's procfs and sysfs.
const (
	DefaultProc = "/proc"
	DefaultSys  = "/sys"
)

// FS reads the kernel's files, rooted at a proc and a sys mount point so it
// runs on fixtures and inside containers. The zero value is not usable; use
// [NewFS] or [Default].
type FS struct {
	Proc string // procfs mount point, normally /proc
	Sys  string // sysfs mount point, normally /sys

	// OpenBitmap opens the idle page bitmap at path for reading and writing.
	// NewFS sets it to open the file with os.OpenFile; tests replace it with
	// a fake kernel that checks the kernel's access rules.
	OpenBitmap func(path string) (BitmapFile, error)
}

// NewFS returns an FS rooted at proc and sys.
func NewFS(proc, sys string) FS {
	return FS{Proc: proc, Sys: sys, OpenBitmap: openBitmapFile}
}

// Default returns the FS of the running kernel: /proc and /sys.
func Default() FS { return NewFS(DefaultProc, DefaultSys) }

// PIDPath returns the path of the file name of process pid:
// <proc>/PID/name.
func (fsys FS) PIDPath(pid int, name string) string {
	return filepath.Join(fsys.Proc, strconv.Itoa(pid), name)
}

// KernelRelease returns the running kernel's release
// (<proc>/sys/kernel/osrelease), "" if it cannot be read.
func (fsys FS) KernelRelease() string {
	s, err := readString(filepath.Join(fsys.Proc, "sys/kernel/osrelease"))
	if err != nil {
		return ""
	}
	return s
}

// writeFile writes value to the existing kernel file path, as one write.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return f.Close()
}

func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(path string) (int, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmtErr(path, "expected an integer, got %q", s)
	}
	return n, nil
}

// fmtErr is an ErrFormat error naming the file.
func fmtErr(path, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrFormat, path, fmt.Sprintf(format, args...))
}
