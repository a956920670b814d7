//go:build unix

package trace_test

import (
	"syscall"
	"time"
)

// binCPUTime returns the CPU time (user + system) this process has used, so
// benchmarks can report throughput per core on a busy machine.
func binCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
