package workload

import (
	"slices"
	"time"
)

// Hello is the first line the workload writes.
type Hello struct {
	PID      int    `json:"pid"`
	Base     uint64 `json:"base"` // address of trace page 0
	Pages    int    `json:"pages"`
	PageSize int    `json:"page_size"`
	Windows  int    `json:"windows"`
	Locked   int    `json:"locked"` // pages 0 .. Locked-1 are mlocked
}

// Options are the workload's options.
type Options struct {
	// Lock mlocks trace pages 0 .. Lock-1, so that MADV_PAGEOUT refuses
	// them: tests use it to check that refused pages are counted exactly.
	Lock int
	// Window, if positive, makes the workload keep its own clock instead
	// of waiting for commands: window k's touches happen at start +
	// k*Window + Window/2, for a live tracker (idle page tracking) that
	// scans at the window boundaries.
	Window time.Duration
}

// Window is what the workload measured in one window.
type Window struct {
	Window   int     `json:"window"`
	Accessed int     `json:"accessed"` // pages touched for an access (timed)
	Born     int     `json:"born"`     // pages touched for a birth (not timed)
	Freed    int     `json:"freed"`    // pages released (of window-1)
	Seconds  float64 `json:"seconds"`  // wall time of the timed touches
	// TouchesPerSec is Accessed / Seconds: the workload's business metric.
	TouchesPerSec float64 `json:"touches_per_sec"`
	// Latency of the timed touches, nanoseconds: nearest-rank percentiles.
	P50NS  int64 `json:"p50_ns"`
	P99NS  int64 `json:"p99_ns"`
	MaxNS  int64 `json:"max_ns"`
	MeanNS int64 `json:"mean_ns"`
	// SlowTouches counts touches of at least SlowTouch: in practice the ones
	// that faulted (a swap-in or a first touch), SlowNS their total time.
	SlowTouches int   `json:"slow_touches"`
	SlowNS      int64 `json:"slow_ns"`
}

// SlowTouch is the latency above which a touch counts as slow: well above a
// cached write (tens of nanoseconds with the timer), below a page fault.
const SlowTouch = 1500 * time.Nanosecond

// summarize fills w's latency fields from lat (sorted in place).
func summarize(w *Window, lat []int64, total time.Duration) {
	w.Seconds = total.Seconds()
	if total > 0 {
		w.TouchesPerSec = float64(len(lat)) / total.Seconds()
	}
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	rank := func(q int) int64 { return lat[(q*len(lat)+99)/100-1] }
	w.P50NS, w.P99NS, w.MaxNS = rank(50), rank(99), lat[len(lat)-1]
	var sum int64
	for _, d := range lat {
		sum += d
		if d >= int64(SlowTouch) {
			w.SlowTouches++
			w.SlowNS += d
		}
	}
	w.MeanNS = sum / int64(len(lat))
}
