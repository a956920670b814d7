//go:build !linux

package linux

import (
	"errors"
	"fmt"
	"time"
)

// CPUTime returns 0: it is read only on Linux.
func CPUTime() time.Duration { return 0 }

var errSearch = errors.New("no such process")

// Supported returns ErrNotSupported: the kernel interfaces are Linux's.
func Supported() error {
	return fmt.Errorf("%w: mdk reads the Linux kernel's interfaces", ErrNotSupported)
}
