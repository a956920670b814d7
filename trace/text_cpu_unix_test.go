//go:build unix

package trace_test

import (
	"syscall"
	"time"
)

// textCPUTime returns the CPU time (user + system) used by this process so far,
// for benchmarks that must be read on a loaded machine.
func textCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
