package linux

import (
	"syscall"
	"time"
)

// CPUTime returns the user+system CPU time this process has used so far
// (getrusage RUSAGE_SELF, every thread), 0 where it cannot be read.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// errSearch is what reads of /proc/PID files return once the process is
// gone.
var errSearch error = syscall.ESRCH

// Supported returns nil on Linux.
func Supported() error { return nil }
