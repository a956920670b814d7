package linux

import (
	"fmt"
	"path/filepath"

	"github.com/prometheus/procfs"
)

// PSIPath returns the system's memory pressure file, <proc>/pressure/memory.
func (fsys FS) PSIPath() string { return filepath.Join(fsys.Proc, "pressure/memory") }

// MemoryPressure returns the "some avg10" percentage of a pressure file
// (Documentation/accounting/psi.rst), the system's <proc>/pressure/memory
// or a cgroup's memory.pressure, which have the same format:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// path "" is the system's file. The file is parsed by prometheus/procfs.
func (fsys FS) MemoryPressure(path string) (float64, error) {
	if path == "" {
		path = fsys.PSIPath()
	}
	// procfs reads <root>/pressure/<resource>: root the file's directory
	// and step back out of "pressure", so that any file is read by
	// procfs's parser.
	p, err := procfs.NewFS(filepath.Dir(path))
	if err != nil {
		return 0, err
	}
	st, err := p.PSIStatsForResource("../" + filepath.Base(path))
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrFormat, path, err)
	}
	if st.Some == nil {
		return 0, fmt.Errorf("%w: %s: no \"some\" line", ErrFormat, path)
	}
	return st.Some.Avg10, nil
}
