// Package memlimit tells how much more memory this process may use, so
// that a command can refuse up front, with a clear error, what would
// otherwise end in the Go runtime's out-of-memory crash.
package memlimit

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
)

// Available returns the memory, in bytes, that the process may still
// allocate: the least of the system's available memory (MemAvailable in
// /proc/meminfo), half the address-space limit (ulimit -v) less what the
// process has resident (the Go runtime reserves address space beyond what
// it uses, and a growing slice briefly holds its old and new arrays), and
// Go's memory limit (GOMEMLIMIT, debug.SetMemoryLimit)
// less what the runtime holds. ok is false when none of them is known.
func Available() (n int64, ok bool) {
	n = math.MaxInt64
	if v, found := meminfo("/proc/meminfo", "MemAvailable:"); found {
		n, ok = v, true
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < math.MaxInt64 {
		used, _ := meminfo("/proc/self/status", "VmRSS:")
		n, ok = min(n, (int64(rl.Cur)-used)/2), true
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		used, _ := meminfo("/proc/self/status", "VmRSS:")
		n, ok = min(n, lim-used), true
	}
	return max(n, 0), ok
}

// meminfo reads a "Key: N kB" line of a /proc file, in bytes.
func meminfo(path, key string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(key)) {
			continue
		}
		fields := bytes.Fields(line[len(key):])
		if len(fields) == 0 {
			return 0, false
		}
		v, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil {
			return 0, false
		}
		if len(fields) > 1 && string(fields[1]) == "kB" {
			v *= 1024
		}
		return v, true
	}
	return 0, false
}

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
