package linux

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

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
	return ParseCgroupProcs(b, file)
}

// ParseCgroupProcs parses a cgroup.procs file, one pid per line; name is
// used in errors, which give the line.
func ParseCgroupProcs(b []byte, name string) ([]int, error) {
	var pids []int
	for i, f := range strings.Split(string(b), "\n") {
		if f == "" {
			continue
		}
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("%w: %s:%d: expected a pid, got %q", ErrFormat, name, i+1, f)
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
