// Package memlimit tells how much more memory this process may use, so
// that a command can refuse up front, with a clear error, what would
// otherwise end in the Go runtime's out-of-memory crash.
package memlimit

import (
	"fmt"
	"math"
	"runtime/debug"
	"sync/atomic"

	"mdk/linux"
)

// Available returns the memory, in bytes, that the process may still
// allocate: the least of the system's available memory (MemAvailable in
// /proc/meminfo), half the address-space limit (ulimit -v) less what the
// process has resident (the Go runtime reserves address space beyond what
// it uses, and a growing slice briefly holds its old and new arrays), and
// Go's memory limit (GOMEMLIMIT, debug.SetMemoryLimit), unless it is a
// collection's trigger ([SetTrigger]), less what the runtime holds. ok is
// false when none of them is known.
func Available() (n int64, ok bool) {
	n = math.MaxInt64
	kernel := linux.Default()
	if v, found := kernel.MemAvailable(); found {
		n, ok = v, true
	}
	if lim, found := addressSpaceLimit(); found {
		used, _ := kernel.SelfRSS()
		n, ok = min(n, (lim-used)/2), true
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 && lim != trigger.Load() {
		used, _ := kernel.SelfRSS()
		n, ok = min(n, lim-used), true
	}
	return max(n, 0), ok
}

// trigger is a memory limit that is a collection's trigger, not a bound
// on the process (0: none).
var trigger atomic.Int64

// SetTrigger says that Go's memory limit, while it is n, only triggers a
// collection (a pass that runs with the collector off until its heap
// reaches n: mpc's sampled pass), and is no bound on the memory the
// process may use: Available ignores it. 0 ends it.
func SetTrigger(n int64) { trigger.Store(n) }

// Check returns an error if need bytes are more than Available; what
// names what needs them.
func Check(what string, need int64) error {
	avail, ok := Available()
	if !ok || need <= avail {
		return nil
	}
	return fmt.Errorf("%s needs about %s of memory, more than the %s available", what, Bytes(need), Bytes(avail))
}

// Bytes formats n bytes for a message: "1.5 GiB".
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		f /= unit
		if f < unit {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return fmt.Sprintf("%.1f EiB", f/unit)
}
