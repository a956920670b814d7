package mpc

import (
	"os"
	"runtime/debug"
	"sync"
)

// passGCPercent is the garbage collector's target during a pass (GOGC=25):
// the heap may grow a quarter beyond what is live, not double. A pass's
// live heap is small and reused (the windows' lists, the decode buffers,
// the per-window tables; the page state lives outside the heap), so the
// extra collections cost nothing measurable, and they keep the heap from
// growing into the headroom GOGC=100 allows: on the 200 M-record benchmark
// trace of docs/bench.md, 67 MB -> 61-65 MB peak RSS at the same CPU time.
const passGCPercent = 25

var gcState struct {
	sync.Mutex
	passes int        // passes running
	prev   int        // the target before the first of them
	high   *highState // a sampled pass's collector off (highGC), if any
}

// lowGC sets the garbage collector's target to passGCPercent, unless GOGC
// is set or the target is already lower, until the returned function is
// called. Concurrent passes share the setting; the last to end restores it.
// It ends a sampled pass's highGC first.
func lowGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	gcState.Lock()
	defer gcState.Unlock()
	endHighLocked(nil)
	if gcState.passes == 0 {
		gcState.prev = debug.SetGCPercent(passGCPercent)
		if gcState.prev < passGCPercent { // lower, or off (-1)
			debug.SetGCPercent(gcState.prev)
		}
	}
	gcState.passes++
	return func() {
		gcState.Lock()
		defer gcState.Unlock()
		gcState.passes--
		if gcState.passes == 0 {
			debug.SetGCPercent(gcState.prev)
		}
	}
}
