package trace

// Gap is the idle interval after one touch of a life (SPEC section 1).
//
// A closed gap ends with an access in window End() = Start+Idle+1; an open
// gap ends with the life, whose end e is also Start+Idle+1. A policy that
// reclaims the gap at the end of window k (Start <= k) saves the windows
// k+1 .. End()-1.
type Gap struct {
	Page   uint32 // dense page ID
	Start  int    // the touch i
	Idle   int    // g: windows without an access after i
	Closed bool   // ended by an access (a promotion if reclaimed)
	Prior  int    // prior reuse distance d at touch i; Inf on a life's first touch
}

// End returns the window where the gap ends: the next touch j of a closed
// gap, or the life's end e of an open one.
func (g Gap) End() int { return g.Start + g.Idle + 1 }

// Walker turns windows into lives, touches and gaps, exactly as SPEC section
// 1 defines them, and counts what `mdk stats` reports. Feed it every window in
// order with [Walker.Window], then call [Walker.Finish] once.
//
// Within a window it applies, per page: an access (which starts a life if
// the page is not alive, or closes the gap after the previous touch); else a
// birth (which starts a life if the page is not alive, and is ignored
// otherwise); then a free (which ends the life after this window, and is
// ignored if the page is not alive).
//
// Per-page state is held in slices indexed by dense ID: 16 bytes a page.
type Walker struct {
	// OnGap, if set, is called for every gap as soon as it is known: a closed
	// gap while its ending window is walked, an open gap when its life ends
	// (a free, or Finish).
	OnGap func(Gap)
	// OnTouch, if set, is called for every touch: t is the window, prior
	// the prior reuse distance (Inf for a life's first touch), born whether
	// the touch is a life's start by a birth rather than an access.
	OnTouch func(page uint32, t, prior int, born bool)

	last  []int32 // last touch of the page's current life; -1 if not alive
	prior []int32 // prior reuse distance at that touch; -1 for Inf
	mark  []int32 // window+1 of the page's last access, to apply "a wins over b"

	windows int
	Counts  Counts
}

// Counts are the life and event statistics a Walker gathers.
type Counts struct {
	Lives         int64 // lives started
	Births        int64 // lives started by a b
	Frees         int64 // lives ended by an f
	IgnoredBirths int64 // b for a page already alive (not accessed in that window)
	IgnoredFrees  int64 // f for a page not alive
	AccessRecords int64 // Σ|A_w|
	AlivePageWins int64 // L
	PeakAlive     int64 // max over windows of pages alive in it
	Alive         int64 // pages alive after the last walked window
	ClosedGaps    int64
	OpenGaps      int64
}

// NewWalker returns a Walker with no callbacks.
func NewWalker() *Walker { return &Walker{} }

func (wk *Walker) grow(n int) {
	for len(wk.last) < n {
		wk.last = append(wk.last, -1)
		wk.prior = append(wk.prior, -1)
		wk.mark = append(wk.mark, 0)
	}
}

func fromInf(d int) int32 {
	if d == Inf {
		return -1
	}
	return int32(d)
}

func toInf(d int32) int {
	if d < 0 {
		return Inf
	}
	return int(d)
}

// Window walks one window. w.Index must be the number of windows walked so far.
func (wk *Walker) Window(w *Window) {
	if w.Index != wk.windows {
		panic("trace: Walker fed windows out of order")
	}
	wk.windows++
	wk.grow(int(int64(len(wk.last)) + int64(len(w.New))))
	k := int32(w.Index)
	wk.Counts.AccessRecords += int64(len(w.Accessed))
	for _, id := range w.Accessed {
		wk.mark[id] = k + 1
		if i := wk.last[id]; i >= 0 {
			d := k - i
			if wk.OnGap != nil {
				wk.OnGap(Gap{Page: id, Start: int(i), Idle: int(d - 1), Closed: true, Prior: toInf(wk.prior[id])})
			}
			wk.Counts.ClosedGaps++
			wk.last[id] = k
			wk.prior[id] = d
			if wk.OnTouch != nil {
				wk.OnTouch(id, int(k), int(d), false)
			}
			continue
		}
		wk.last[id] = k
		wk.prior[id] = -1
		wk.Counts.Lives++
		wk.Counts.Alive++
		if wk.OnTouch != nil {
			wk.OnTouch(id, int(k), Inf, false)
		}
	}
	for _, id := range w.Born {
		if wk.mark[id] == k+1 {
			continue // a wins over b
		}
		if wk.last[id] >= 0 {
			wk.Counts.IgnoredBirths++
			continue
		}
		wk.last[id] = k
		wk.prior[id] = -1
		wk.Counts.Lives++
		wk.Counts.Births++
		wk.Counts.Alive++
		if wk.OnTouch != nil {
			wk.OnTouch(id, int(k), Inf, true)
		}
	}
	// Every page alive now is alive in this window, including those freed
	// at its end.
	wk.Counts.AlivePageWins += wk.Counts.Alive
	if wk.Counts.Alive > wk.Counts.PeakAlive {
		wk.Counts.PeakAlive = wk.Counts.Alive
	}
	for _, id := range w.Freed {
		i := wk.last[id]
		if i < 0 {
			wk.Counts.IgnoredFrees++
			continue
		}
		wk.Counts.Frees++
		wk.end(id, int(k)+1)
	}
}

func (wk *Walker) end(id uint32, e int) {
	i := int(wk.last[id])
	if wk.OnGap != nil {
		wk.OnGap(Gap{Page: id, Start: i, Idle: e - i - 1, Closed: false, Prior: toInf(wk.prior[id])})
	}
	wk.Counts.OpenGaps++
	wk.last[id] = -1
	wk.prior[id] = -1
	wk.Counts.Alive--
}

// Finish ends every life still alive at the end of the trace (e = W, the
// number of windows walked) and reports their open gaps, in dense-ID order.
func (wk *Walker) Finish() {
	for id := range wk.last {
		if wk.last[id] >= 0 {
			wk.end(uint32(id), wk.windows)
		}
	}
}

// Windows returns the number of windows walked so far.
func (wk *Walker) Windows() int { return wk.windows }
