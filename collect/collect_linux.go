//go:build linux

package collect

import (
	"syscall"
	"time"
)

// platformSupported: idle page tracking exists only on Linux.
const platformSupported = true

// errSearch is what reads of /proc/PID files return once the process is gone.
var errSearch error = syscall.ESRCH

// cpuTime returns the user+system CPU time this process has used so far
// (getrusage RUSAGE_SELF), so that a scan's cost includes every thread.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
