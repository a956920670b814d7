package linux

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps (proc(5)):
//
//	00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon
//	7ffc1b5f6000-7ffc1b617000 rw-p 00000000 00:00 0   [stack]
type Mapping struct {
	Start, End uint64 // virtual address range [Start, End), bytes
	Perms      string // "r-xp"
	Offset     uint64 // file offset of Start (0 for anonymous memory)
	Inode      uint64 // 0 for anonymous memory
	Path       string // file or pseudo-path ("[heap]"), "" for anonymous
}

// Kernel reports whether the mapping holds the kernel's own pages (the
// vdso and its data), which are never on an LRU list.
func (m Mapping) Kernel() bool {
	switch m.Path {
	case "[vsyscall]", "[vvar]", "[vvar_vclock]", "[vdso]":
		return true
	}
	return false
}

// MapsLimit is the most bytes of a maps file read: a process with more
// mappings than that is refused rather than read into unbounded memory.
const MapsLimit = 256 << 20

// Maps reads /proc/PID/maps.
//
// prometheus/procfs parses this file too (Proc.ProcMaps); mdk keeps its own
// parser because procfs's gives no line number in its errors, joins a path's
// runs of spaces into one, reads without a bound and is not built on every
// platform mdk builds on.
func (fsys FS) Maps(pid int) ([]Mapping, error) {
	path := fsys.PIDPath(pid, "maps")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseMaps(io.LimitReader(f, MapsLimit), path)
}

// ParseMaps parses a maps file; name is used in errors, which give the
// line. Mappings must be page-aligned ([PageSize]) and in increasing,
// non-overlapping order, as the kernel writes them.
func ParseMaps(r io.Reader, name string) ([]Mapping, error) {
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
	ps := uint64(PageSize())
	lo, hi, ok := bytes.Cut(fields[0], []byte("-"))
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	if !ok || err1 != nil || err2 != nil || start >= end || start%ps != 0 || end%ps != 0 {
		return m, fmt.Sprintf("bad address range %q (want page-aligned hex start-end, start < end)", clip(fields[0]))
	}
	if p := fields[1]; len(p) != 4 || strings.Trim(string(p), "rwxsp-") != "" {
		return m, fmt.Sprintf("bad permissions %q", clip(p))
	}
	off, err := strconv.ParseUint(string(fields[2]), 16, 64)
	if err != nil {
		return m, fmt.Sprintf("bad offset %q", clip(fields[2]))
	}
	if maj, min, ok := bytes.Cut(fields[3], []byte(":")); !ok || !isHex(maj) || !isHex(min) {
		return m, fmt.Sprintf("bad device %q", clip(fields[3]))
	}
	inode, err := strconv.ParseUint(string(fields[4]), 10, 64)
	if err != nil {
		return m, fmt.Sprintf("bad inode %q", clip(fields[4]))
	}
	m.Start, m.End, m.Perms, m.Offset, m.Inode = start, end, string(fields[1]), off, inode
	if len(fields) > 5 {
		// The path is the rest of the line after the inode; it may hold spaces.
		m.Path = string(bytes.TrimRight(afterFields(b, 5), " "))
	}
	return m, ""
}

// afterFields returns b from the start of its field n+1 (fields counted
// from 1, separated by spaces or tabs).
func afterFields(b []byte, n int) []byte {
	for range n {
		b = bytes.TrimLeft(b, " \t")
		i := bytes.IndexAny(b, " \t")
		if i < 0 {
			return nil
		}
		b = b[i:]
	}
	return bytes.TrimLeft(b, " \t")
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
