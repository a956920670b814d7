package fleet

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"

	"mdk/trace"
)

// Source is where job lists, globs and traces are found: the local file
// system ([LocalSource]) or another one (fleet/beam uses Beam's filesystem
// layer, for object stores).
type Source struct {
	// Glob returns the paths matching a pattern.
	Glob func(pattern string) ([]string, error)
	// ReadHead returns up to the first n bytes of a file; ReadAll all of it.
	ReadHead func(path string, n int) ([]byte, error)
	ReadAll  func(path string) ([]byte, error)
}

// isTrace reports whether head starts like a trace in a known format.
func isTrace(head []byte) bool {
	for _, f := range trace.Formats() {
		if len(f.Magic) > 0 && bytes.HasPrefix(head, f.Magic) {
			return true
		}
	}
	return false
}

// Expand turns command-line arguments into jobs: a glob (* ? [) stands for
// the matching files, sorted; a trace file (by its first bytes) for itself;
// any other file is a job list ([ReadList]). Order is kept, duplicates too.
func (s Source) Expand(args []string) ([]string, error) {
	var jobs []string
	for _, a := range args {
		if IsGlob(a) {
			m, err := s.Glob(a)
			if err != nil {
				return nil, fmt.Errorf("glob %q: %w", a, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("glob %q matches no file", a)
			}
			slices.Sort(m)
			jobs = append(jobs, m...)
			continue
		}
		head, err := s.ReadHead(a, 16)
		if err != nil {
			return nil, fmt.Errorf("job list: %w", err)
		}
		if isTrace(head) {
			jobs = append(jobs, a)
			continue
		}
		b, err := s.ReadAll(a)
		if err != nil {
			return nil, fmt.Errorf("job list: %w", err)
		}
		l := ReadList(string(b))
		if len(l) == 0 {
			return nil, fmt.Errorf("job list %s names no trace", a)
		}
		jobs = append(jobs, l...)
	}
	return jobs, nil
}

// LocalSource reads the local file system.
var LocalSource = Source{
	Glob: filepath.Glob,
	ReadHead: func(path string, n int) ([]byte, error) {
		b, err := readHead(path, n)
		return b, err
	},
	ReadAll: readFile,
}
