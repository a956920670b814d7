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
// Per-page state is one slice indexed by dense ID: 8 bytes a page. For the
// curve generator's built-in policies, which need gaps only counted in a
// histogram, [HistWalker] is the faster path.
type Walker struct {
	// OnGap, if set, is called for every gap as soon as it is known: a closed
	// gap while its ending window is walked, an open gap when its life ends
	// (a free, or Finish).
	OnGap func(Gap)
	// OnTouch, if set, is called for every touch: t is the window, prior
	// the prior reuse distance (Inf for a life's first touch), born whether
	// the touch is a life's start by a birth rather than an access.
	OnTouch func(page uint32, t, prior int, born bool)

	st      []pageState // by dense ID
	windows int
	Counts  Counts
}

// pageState is a page's current life: its last touch (-1 if not alive) and
// the prior reuse distance at that touch (-1 for infinite).
type pageState struct {
	last, prior int32
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

func (wk *Walker) grow(pages int) {
	if len(wk.st) < pages {
		if cap(wk.st) < pages {
			// Grow by a quarter, not by doubling: the state is most of
			// an engine's memory.
			st := make([]pageState, len(wk.st), pages+pages/4)
			copy(st, wk.st)
			wk.st = st
		}
		for len(wk.st) < pages {
			wk.st = append(wk.st, pageState{-1, -1})
		}
	}
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
	wk.grow(len(wk.st) + w.NumNew())
	k := int32(w.Index)
	st := wk.st
	for _, id := range w.Accessed {
		wk.Counts.AccessRecords++
		p := &st[id]
		if i := p.last; i >= 0 {
			d := k - i
			if wk.OnGap != nil {
				wk.OnGap(Gap{Page: id, Start: int(i), Idle: int(d - 1), Closed: true, Prior: toInf(p.prior)})
			}
			wk.Counts.ClosedGaps++
			*p = pageState{k, d}
			if wk.OnTouch != nil {
				wk.OnTouch(id, int(k), int(d), false)
			}
			continue
		}
		*p = pageState{k, -1}
		wk.Counts.Lives++
		wk.Counts.Alive++
		if wk.OnTouch != nil {
			wk.OnTouch(id, int(k), Inf, false)
		}
	}
	for _, id := range w.Born {
		p := &st[id]
		if p.last == k {
			// Touched in this window already: births come after accesses
			// and a page is born at most once a window, so it was accessed:
			// the access wins over the birth.
			continue
		}
		if p.last >= 0 {
			wk.Counts.IgnoredBirths++
			continue
		}
		*p = pageState{k, -1}
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
		if st[id].last < 0 {
			wk.Counts.IgnoredFrees++
			continue
		}
		wk.Counts.Frees++
		wk.end(id, int(k)+1)
	}
}

func (wk *Walker) end(id uint32, e int) {
	p := &wk.st[id]
	i := int(p.last)
	if wk.OnGap != nil {
		wk.OnGap(Gap{Page: id, Start: i, Idle: e - i - 1, Closed: false, Prior: toInf(p.prior)})
	}
	wk.Counts.OpenGaps++
	*p = pageState{-1, -1}
	wk.Counts.Alive--
}

// Finish ends every life still alive at the end of the trace (e = W, the
// number of windows walked) and reports their open gaps, in dense-ID order.
func (wk *Walker) Finish() {
	for x := range wk.st {
		if wk.st[x].last >= 0 {
			wk.end(uint32(x), wk.windows)
		}
	}
}

// Windows returns the number of windows walked so far.
func (wk *Walker) Windows() int { return wk.windows }
