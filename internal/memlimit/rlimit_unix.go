//go:build unix

package memlimit

import (
	"math"
	"syscall"
)

// addressSpaceLimit returns the soft address-space limit (ulimit -v), if
// one is set.
func addressSpaceLimit() (int64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur >= math.MaxInt64 {
		return 0, false
	}
	return int64(rl.Cur), true
}
