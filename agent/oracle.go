package agent

import "mdk/trace"

// gap is one gap of a page as the oracle saw it in a trace known in advance.
type gap struct {
	start, idle int
	closed      bool
}

// oracle returns every page's gaps in time order, with SPEC section 1's
// life rules (an access wins over a birth; a free ends the life after its
// window), as the simulator's oracle computes them. Offline policies (vmin,
// opp) read the idle length of the gap starting at a page's last touch.
func oracle(t *trace.Trace) [][]gap {
	gaps := make([][]gap, len(t.Pages))
	alive := make([]bool, len(t.Pages))
	last := make([]int, len(t.Pages))
	for k := range t.Windows {
		w := &t.Windows[k]
		for _, id := range w.Accessed {
			if alive[id] {
				gaps[id] = append(gaps[id], gap{start: last[id], idle: k - last[id] - 1, closed: true})
			}
			alive[id], last[id] = true, k
		}
		for _, id := range w.Born {
			if !alive[id] { // an access in this window made it alive
				alive[id], last[id] = true, k
			}
		}
		for _, id := range w.Freed {
			if alive[id] {
				gaps[id] = append(gaps[id], gap{start: last[id], idle: k - last[id], closed: false})
				alive[id] = false
			}
		}
	}
	for id := range gaps {
		if alive[id] {
			gaps[id] = append(gaps[id], gap{start: last[id], idle: len(t.Windows) - last[id] - 1, closed: false})
		}
	}
	return gaps
}
