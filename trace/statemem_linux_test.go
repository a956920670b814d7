package trace_test

import (
	"testing"

	"mdk/trace"
)

// TestHistWalkerStateMapped: on Linux the page state lives in a mapping
// that grows without copying (it keeps the generator's peak memory near
// 4 bytes a page), across many growths, moves to a mapping advised to use
// huge pages once it reaches trace.HugeMin bytes (where the system gives
// them) and not before, keeping its values across the move, and moves to
// the heap when the words widen. Each window accesses its new pages and
// the previous window's again, so a lost value would start a second life.
// The values are checked further by TestHistWalker, whose traces grow the
// state in every window.
func TestHistWalkerStateMapped(t *testing.T) {
	h := trace.NewGapHistogram(3, func(d int) int { return min(d, 2) })
	hw := trace.NewHistWalker([]*trace.GapHistogram{h})
	defer hw.Close()
	next := uint32(0)
	for w := range 40 {
		win := &trace.Window{Index: w}
		if w > 0 {
			for id := next - 50000; id < next; id++ {
				win.Accessed = append(win.Accessed, id)
			}
		}
		for range 50000 { // 2 M pages in all: the mapping grows many times
			win.New = append(win.New, trace.Page{Page: uint64(next)})
			win.Accessed = append(win.Accessed, next)
			next++
		}
		hw.Start(win)
		hw.Wait()
		h.Drain(true, nil)
		h.Drain(false, nil)
		if trace.StateOnHeap(hw) {
			t.Fatalf("window %d: the state moved to the heap", w)
		}
		if want := trace.HugePagesOn() && int(next)*4 >= trace.HugeMin; trace.StateHuge(hw) != want {
			t.Fatalf("window %d: %d bytes of state advised to use huge pages: %v, want %v", w, next*4, trace.StateHuge(hw), want)
		}
	}
	if hw.Counts.Lives != int64(next) || hw.Counts.ClosedGaps != int64(next-50000) {
		t.Fatalf("%d lives and %d closed gaps, want %d and %d", hw.Counts.Lives, hw.Counts.ClosedGaps, next, next-50000)
	}
	trace.SetPackLimit(hw, 40)
	hw.Start(&trace.Window{Index: 40})
	hw.Wait()
	hw.Start(&trace.Window{Index: 41})
	hw.Wait()
	if !trace.StateOnHeap(hw) {
		t.Fatal("widened words are not on the heap")
	}
	hw.Finish()
	if hw.Counts.Lives != int64(next) {
		t.Fatalf("lives %d, want %d", hw.Counts.Lives, next)
	}
}
