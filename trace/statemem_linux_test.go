package trace_test

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"mdk/trace"
)

// TestHistWalkerStateMapped: on Linux the page state lives in a mapping
// that grows without copying (it keeps the generator's peak memory near
// 4 bytes a page), across many growths, moves to a mapping advised to use
// huge pages once it reaches trace.HugeMin bytes (whatever the system's
// setting: where it is "never" the kernel ignores the advice) and not before, keeping its values across the move, and moves to
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
		if want := int(next)*4 >= trace.HugeMin; trace.StateHuge(hw) != want {
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

// TestHistWalkerStateFaultsOnce: a walk faults each page of fresh state in
// once, by a write, not by the walk's read (which would map the kernel's
// zero page) and then its write (a second fault, and a TLB flush that
// interrupts the other CPUs running the process). The state is kept under
// trace.HugeMin, in 4 KiB pages; the faults are the walking thread's own
// (RUSAGE_THREAD, the walker has no helpers), counted around one window
// whose lists are built beforehand.
func TestHistWalkerStateFaultsOnce(t *testing.T) {
	if binRace {
		t.Skip("the race detector faults in shadow memory for every page the walk touches")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := trace.NewGapHistogram(3, func(d int) int { return min(d, 2) })
	hw := trace.NewHistWalker([]*trace.GapHistogram{h})
	defer hw.Close()
	n := trace.HugeMin/4 - 1<<16 // pages: 4-byte words, under HugeMin
	win := &trace.Window{Index: 0}
	for id := range n {
		win.New = append(win.New, trace.Page{Page: uint64(id)})
		win.Accessed = append(win.Accessed, uint32(id))
	}
	h.Grow(1) // the histogram's cells, before counting
	var before, after unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &before); err != nil {
		t.Skip("no RUSAGE_THREAD:", err)
	}
	hw.Start(win)
	hw.Wait()
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &after); err != nil {
		t.Fatal(err)
	}
	faults := after.Minflt - before.Minflt
	pages := int64(n*4+4095) / 4096
	t.Logf("%d pages of state, %d faults", pages, faults)
	if faults > pages+pages/10+16 {
		t.Fatalf("%d faults walking %d pages of fresh state: each page faulted in more than once", faults, pages)
	}
	if hw.Counts.Lives != int64(n) {
		t.Fatalf("%d lives, want %d", hw.Counts.Lives, n)
	}
}
