//go:build !linux

package collect

import "fmt"

// Actuator reclaims pages of one process; it exists only on Linux.
type Actuator struct{}

// OpenActuator returns ErrNotSupported: process_madvise is Linux only.
func (fsys FS) OpenActuator(pid int) (*Actuator, error) {
	return nil, fmt.Errorf("%w: reclaiming pages of a process needs Linux (process_madvise)", ErrNotSupported)
}

// OpenObserver returns ErrNotSupported, as OpenActuator.
func (fsys FS) OpenObserver(pid int) (*Actuator, error) { return fsys.OpenActuator(pid) }

// Close does nothing.
func (a *Actuator) Close() error { return nil }

// Pagemap returns nil.
func (a *Actuator) Pagemap() *Pagemap { return nil }

// PageOut returns ErrNotSupported.
func (a *Actuator) PageOut(vpns []uint64) (PageOutStats, error) {
	return PageOutStats{}, ErrNotSupported
}
