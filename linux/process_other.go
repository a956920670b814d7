//go:build !linux

package linux

import "fmt"

// Process is a pidfd of one process; it exists only on Linux.
type Process struct{}

func probe(f Feature) error {
	return fmt.Errorf("%w: %s is Linux's", ErrNotSupported, f)
}

// OpenProcess returns ErrNotSupported: process_madvise is Linux only.
func OpenProcess(pid int) (*Process, error) {
	return nil, fmt.Errorf("%w: reclaiming pages of a process needs Linux (process_madvise)", ErrNotSupported)
}

// OpenPidfd returns ErrNotSupported: pidfds are Linux only.
func OpenPidfd(pid int) (*Process, error) { return OpenProcess(pid) }

// PID returns 0.
func (p *Process) PID() int { return 0 }

// Close does nothing.
func (p *Process) Close() error { return nil }

// PageOut returns ErrNotSupported.
func (p *Process) PageOut(vpns []uint64) (PageOutStats, error) {
	return PageOutStats{}, ErrNotSupported
}
