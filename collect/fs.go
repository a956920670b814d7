package collect

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Errors of the idle-page recorder. Each is wrapped with the details of the
// case; match them with errors.Is.
var (
	ErrNotSupported = errors.New("collect: not supported on this platform")
	ErrNoIdleTrack  = errors.New("collect: no idle page tracking")
	ErrPermission   = errors.New("collect: permission denied")
	ErrNoProcess    = errors.New("collect: no such process")
	ErrFormat       = errors.New("collect: malformed kernel file")
)

// FS reads the kernel files the recorder needs, rooted at a proc and a sys
// mount point so it runs on fixtures and inside containers. The zero value is
// not usable; use [NewFS].
type FS struct {
	Proc string // procfs mount point, normally /proc
	Sys  string // sysfs mount point, normally /sys

	// OpenBitmap opens the idle page bitmap at path for reading and writing.
	// NewFS sets it to open the file with os.OpenFile; tests replace it with
	// a fake kernel that checks the kernel's access rules.
	OpenBitmap func(path string) (BitmapFile, error)
}

// BitmapFile is the open /sys/kernel/mm/page_idle/bitmap. As in the kernel,
// offsets and lengths must be multiples of 8 (else EINVAL), a read past the
// last page frame returns fewer bytes (0 and io.EOF at or past it), and a
// write sets the idle flags of the pages whose bits are 1, ignoring zero
// bits.
type BitmapFile interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

// NewFS returns an FS rooted at proc and sys.
func NewFS(proc, sys string) FS {
	return FS{Proc: proc, Sys: sys, OpenBitmap: openBitmapFile}
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
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		// "y"/"n" on some kernels
		return s == "y" || s == "Y", nil
	}
	return v != 0, nil
}

// CgroupProcs returns the pids in the cgroup at path, read from its
// cgroup.procs. path is a cgroup directory, either below the sys root
// ("/sys/fs/cgroup/app.slice", re-rooted at FS.Sys) or relative to
// <sys>/fs/cgroup ("app.slice").
func (fsys FS) CgroupProcs(path string) ([]int, error) {
	file := filepath.Join(fsys.CgroupDir(path), "cgroup.procs")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var pids []int
	for i, f := range strings.Split(string(b), "\n") {
		if f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("%w: %s:%d: expected a pid, got %q", ErrFormat, file, i+1, f)
		}
		pids = append(pids, p)
	}
	return pids, nil
}

// CgroupDir returns the directory of the cgroup at path under FS.Sys.
func (fsys FS) CgroupDir(path string) string {
	rel := strings.TrimPrefix(filepath.Clean(path), "/sys/fs/cgroup")
	return filepath.Join(fsys.Sys, "fs/cgroup", rel)
}

func (fsys FS) pidPath(pid int, name string) string {
	return filepath.Join(fsys.Proc, strconv.Itoa(pid), name)
}

// Mapping is one line of /proc/PID/maps:
//
//	00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon
//	7ffc1b5f6000-7ffc1b617000 rw-p 00000000 00:00 0   [stack]
type Mapping struct {
	Start, End uint64 // virtual address range [Start, End), bytes
	Perms      string // "r-xp"
	Path       string // file or pseudo-path ("[heap]"), "" for anonymous
}

// Maps reads /proc/PID/maps.
func (fsys FS) Maps(pid int) ([]Mapping, error) {
	path := fsys.pidPath(pid, "maps")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMaps(io.LimitReader(f, 256<<20), path)
}

// parseMaps parses a maps file; name is used in errors, which give the line.
func parseMaps(r io.Reader, name string) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	line := 0
	for sc.Scan() {
		line++
		m, msg := parseMapsLine(sc.Bytes())
		if msg != "" {
			return nil, fmt.Errorf("%w: %s:%d: %s", ErrFormat, name, line, msg)
		}
		if n := len(out); n > 0 && m.Start < out[n-1].End {
			return nil, fmt.Errorf("%w: %s:%d: mapping %x-%x overlaps or precedes the one before", ErrFormat, name, line, m.Start, m.End)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: after line %d: %w", name, line, err)
	}
	return out, nil
}

func parseMapsLine(b []byte) (Mapping, string) {
	var m Mapping
	fields := bytes.Fields(b)
	if len(fields) < 5 {
		return m, fmt.Sprintf("expected \"start-end perms offset dev inode [path]\", got %q", clip(b))
	}
	lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	if !ok || err1 != nil || err2 != nil || start >= end || start%4096 != 0 || end%4096 != 0 {
		return m, fmt.Sprintf("bad address range %q (want page-aligned hex start-end, start < end)", clip(fields[0]))
	}
	if p := fields[1]; len(p) != 4 || strings.Trim(string(p), "rwxsp-") != "" {
		return m, fmt.Sprintf("bad permissions %q", clip(p))
	}
	if _, err := strconv.ParseUint(string(fields[2]), 16, 64); err != nil {
		return m, fmt.Sprintf("bad offset %q", clip(fields[2]))
	}
	if maj, min, ok := bytes.Cut(fields[3], []byte(":")); !ok || !isHex(maj) || !isHex(min) {
		return m, fmt.Sprintf("bad device %q", clip(fields[3]))
	}
	if _, err := strconv.ParseUint(string(fields[4]), 10, 64); err != nil {
		return m, fmt.Sprintf("bad inode %q", clip(fields[4]))
	}
	m.Start, m.End, m.Perms = start, end, string(fields[1])
	if len(fields) > 5 {
		// The path is the rest of the line after the inode; it may hold spaces.
		i := bytes.Index(b, fields[5])
		m.Path = string(bytes.TrimRight(b[i:], " "))
	}
	return m, ""
}

func isHex(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

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
	path := fsys.pidPath(pid, "pagemap")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &Pagemap{f: f, c: f, name: path}, nil
}

// Close closes the file.
func (pm *Pagemap) Close() error { return pm.c.Close() }

// pagemapChunk is the number of entries read at once.
const pagemapChunk = 8192

// Read returns the entries of the virtual pages first .. first+len(dst)-1
// into dst. Entries past the end of the file read as zero (not mapped).
func (pm *Pagemap) Read(first uint64, dst []uint64) error {
	if first > (1<<63-1)/8-uint64(len(dst)) {
		return fmt.Errorf("%w: %s: virtual page %#x out of range", ErrFormat, pm.name, first)
	}
	for len(dst) > 0 {
		n := min(len(dst), pagemapChunk)
		if cap(pm.buf) < n*8 {
			pm.buf = make([]byte, pagemapChunk*8)
		}
		b := pm.buf[:n*8]
		off := int64(first * 8)
		got, err := pm.f.ReadAt(b, off)
		if err != nil && !errors.Is(err, io.EOF) {
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
