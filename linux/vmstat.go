package linux

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// KeyValues reads a file of "key value" lines (/proc/vmstat, a cgroup's
// memory.stat) and returns the values of the keys asked for; a key absent
// from the file is absent from the map, so that "not on this kernel" is
// told apart from zero. prometheus/procfs parses neither file.
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
	return ParseKeyValues(b, path, keys)
}

// ParseKeyValues parses "key value" lines; name is used in errors, which
// give the line.
func ParseKeyValues(b []byte, name string, keys []string) (map[string]int64, error) {
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

// VMStat reads the keys asked for of <proc>/vmstat.
func (fsys FS) VMStat(keys ...string) (map[string]int64, error) {
	return KeyValues(filepath.Join(fsys.Proc, "vmstat"), keys...)
}

// MemoryStat reads the keys asked for of the memory.stat of the cgroup at
// path (see [FS.CgroupDir]).
func (fsys FS) MemoryStat(cgroup string, keys ...string) (map[string]int64, error) {
	return KeyValues(filepath.Join(fsys.CgroupDir(cgroup), "memory.stat"), keys...)
}

// MajorFaults returns the major page faults of process pid so far
// (/proc/PID/stat, field majflt, parsed by prometheus/procfs).
func (fsys FS) MajorFaults(pid int) (int64, error) {
	p, err := procfs.NewFS(fsys.Proc)
	if err != nil {
		return 0, err
	}
	proc, err := p.Proc(pid)
	if err != nil {
		return 0, err
	}
	s, err := proc.Stat()
	if err != nil {
		return 0, err
	}
	return int64(s.MajFlt), nil
}

// MemAvailable returns MemAvailable of <proc>/meminfo in bytes (parsed by
// prometheus/procfs); false when the kernel does not report it.
func (fsys FS) MemAvailable() (int64, bool) {
	p, err := procfs.NewFS(fsys.Proc)
	if err != nil {
		return 0, false
	}
	mi, err := p.Meminfo()
	if err != nil || mi.MemAvailableBytes == nil {
		return 0, false
	}
	return int64(*mi.MemAvailableBytes), true
}

// SelfRSS returns the resident set of this process in bytes
// (/proc/self/status VmRSS, parsed by prometheus/procfs).
func (fsys FS) SelfRSS() (int64, bool) {
	p, err := procfs.NewFS(fsys.Proc)
	if err != nil {
		return 0, false
	}
	self, err := p.Self()
	if err != nil {
		return 0, false
	}
	st, err := self.NewStatus()
	if err != nil {
		return 0, false
	}
	return int64(st.VmRSS), true
}

// MemStatus returns the resident set (VmRSS) and the swapped-out anonymous
// memory (VmSwap) of process pid in bytes (<proc>/PID/status, parsed by
// prometheus/procfs).
func (fsys FS) MemStatus(pid int) (rss, swap int64, err error) {
	p, err := procfs.NewFS(fsys.Proc)
	if err != nil {
		return 0, 0, err
	}
	proc, err := p.Proc(pid)
	if err != nil {
		return 0, 0, err
	}
	st, err := proc.NewStatus()
	if err != nil {
		return 0, 0, err
	}
	return int64(st.VmRSS), int64(st.VmSwap), nil
}
