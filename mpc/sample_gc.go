package mpc

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"

	"mdk/internal/memlimit"
)

// sampleHeapBytes bounds the heap of a partitioned sample's pass before its
// first collection (highGC).
const sampleHeapBytes = 64 << 20

// highState is a pass's collector turned off by highGC, and what it
// restores: the target before.
type highState struct{ prev int }

// highGC turns the garbage collector off, with a memory limit of
// sampleHeapBytes, for a partitioned sample's pass (sampledPartitions),
// until its first collection (which the limit forces when the heap
// reaches sampleHeapBytes), the returned function, or an exact pass's
// lowGC, whichever comes first; each restores the process's target and no
// limit. So the heap is at most sampleHeapBytes (and a collection's
// overshoot) before the first collection, and after it what the process's
// target gives. A 1% sample of the benchmark trace allocates about 30 MB
// in all and so runs without a collection: 0.90x the CPU at GOGC=100, the
// same peak RSS (docs/bench.md, "The collector off until 64 MiB").
//
// The limit is a trigger only: memlimit.Available, which the passes' memory
// checks read, ignores it (memlimit.SetTrigger).
//
// It does nothing when GOGC or GOMEMLIMIT is set, when the target is off
// or a memory limit set already, or while another pass runs (an exact
// pass's lowGC, or another highGC).
func highGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gcState.Lock()
	defer gcState.Unlock()
	if gcState.passes > 0 || gcState.high != nil || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	prev := debug.SetGCPercent(-1)
	if prev < 0 {
		return func() {}
	}
	h := &highState{prev: prev}
	gcState.high = h
	memlimit.SetTrigger(sampleHeapBytes) // not a bound for memlimit.Available
	debug.SetMemoryLimit(sampleHeapBytes)
	// An object nothing references: its cleanup runs after the first
	// collection.
	runtime.AddCleanup(new([64]byte), endHigh, h)
	return func() { endHigh(h) }
}

// endHigh restores what highGC changed for h, if h is still in force.
func endHigh(h *highState) {
	gcState.Lock()
	defer gcState.Unlock()
	endHighLocked(h)
}

// endHighLocked is endHigh with gcState locked; h nil ends whichever is in
// force.
func endHighLocked(h *highState) {
	if gcState.high == nil || h != nil && gcState.high != h {
		return
	}
	debug.SetGCPercent(gcState.high.prev)
	debug.SetMemoryLimit(math.MaxInt64)
	memlimit.SetTrigger(0)
	gcState.high = nil
}
