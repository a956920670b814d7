package agent

import (
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/sim"
	"mdk/trace"
)

// eventsAfter is the derivation compare made before the life rules were
// written once in sim: from the windows of each page's accesses and frees.
// It is kept here as the reference lives.after must equal.
func eventsAfter(t *trace.Trace, p uint32, k, W int) (prom, end int) {
	var acc, free []int
	for w := range t.Windows {
		if slices.Contains(t.Windows[w].Accessed, p) {
			acc = append(acc, w)
		}
		if slices.Contains(t.Windows[w].Freed, p) {
			free = append(free, w)
		}
	}
	end = W
	if i, _ := slices.BinarySearch(free, k); i < len(free) {
		end = free[i] + 1
	}
	if i, _ := slices.BinarySearch(acc, k+1); i < len(acc) && acc[i] < end {
		return acc[i], acc[i]
	}
	return -1, end
}

// TestLivesAfterEqualsEvents: for every page alive at the end of every
// window (the pages the agent can decide and skip) on many random traces,
// the gap-based after equals the event-based one.
func TestLivesAfterEqualsEvents(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 21))
	checked := 0
	for range testutil.Count(300) {
		tr := testutil.RandomTrace(rng)
		W := len(tr.Windows)
		l := lives(sim.TraceGaps(tr))
		life := make([]sim.Life, len(tr.Pages))
		for k := range W {
			ev := sim.WindowEvents(&tr.Windows[k])
			for _, id := range ev.Accessed {
				life[id].Touch(k)
			}
			for _, id := range ev.Born {
				if !life[id].Alive {
					life[id].Touch(k)
				}
			}
			for id := range life {
				if !life[id].Alive {
					continue
				}
				gp, ge := l.after(uint32(id), k, W)
				ep, ee := eventsAfter(tr, uint32(id), k, W)
				if gp != ep || ge != ee {
					t.Fatalf("page %d alive at window %d of %d: gaps say (%d, %d), events (%d, %d)", id, k, W, gp, ge, ep, ee)
				}
				checked++
			}
			for _, id := range ev.Freed {
				if life[id].Alive {
					life[id].Free()
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("checked only %d page-windows", checked)
	}
}
