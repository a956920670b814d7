package trace

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// HistWalker counts every gap of a trace into GapHistograms, window by
// window: the same gaps, by idle length and prior class, that a [Walker]
// reports to OnGap and [GapHistogram.Add] would count. It is the fast path of
// the curve generator, whose built-in policies need no more, and differs
// from a Walker in three ways:
//
//   - Packed state. A page needs only its last touch and the class of the
//     prior reuse distance at that touch, packed into one 4-byte word
//     (0: not alive, else (last touch + 1) | class << shift): half the
//     memory traffic of a Walker's 8 bytes, and the walk is memory-bound.
//     When the windows outgrow the bits left beside the class, the words
//     widen to 8 bytes and the walk goes on.
//   - Several goroutines. A window's lists are cut into chunks that the
//     caller and the helper goroutines claim one by one; each ID is in a
//     list at most once, so chunks touch disjoint pages. The accesses, then
//     the births, then the frees are walked in three phases, in SPEC order.
//     Each goroutine counts into its own histogram; their sum is the
//     window's.
//   - Overlap. [HistWalker.Start] sets the helpers on a window and returns;
//     the caller can read the next window (see [Lookahead]) before it joins
//     in with [HistWalker.Wait].
//
// Counts are the trace's, as a Walker's.
type HistWalker struct {
	Counts Counts

	hists   []*GapHistogram // [0]: the caller's; [1+i]: helper i's
	p32     *packed[uint32]
	p64     *packed[uint64]
	walk    func(h *GapHistogram, kind Kind, ids []uint32, w int, c *Counts)
	pages   int
	windows int
	cur     *Window // between Start and Wait
	sent    bool    // the helpers walk cur's accesses
	chunk   int     // IDs a chunk
	limit   int     // widen after this window index (tests lower it)
	jobs    [3]job  // by Kind
	in      []chan *job
	done    chan Counts
	closed  bool
}

// A job is one phase of a window: its list, cut into chunks.
type job struct {
	kind Kind
	ids  []uint32
	w    int
	next atomic.Int64 // next chunk to claim
}

// histChunk is the number of IDs a goroutine claims at a time: large enough
// that claiming costs nothing, small enough to share a window's last IDs.
const histChunk = 16 << 10

// NewHistWalker returns a walker that counts into hists: the caller's
// goroutine into hists[0], and one helper goroutine for each of the others.
// The histograms must be alike (same classes). Call [HistWalker.Close] when
// done with it.
func NewHistWalker(hists []*GapHistogram) *HistWalker {
	h := hists[0]
	hw := &HistWalker{hists: hists, chunk: histChunk, done: make(chan Counts, len(hists))}
	// The class takes the high bits; the last touch needs the rest.
	if cb := uint(bits.Len(uint(h.classes - 1))); cb <= 16 {
		hw.p32 = newPacked[uint32](h, 32-cb)
		hw.walk = hw.p32.chunk
		hw.limit = hw.p32.limit()
	} else {
		hw.p64 = newPacked[uint64](h, 32)
		hw.walk = hw.p64.chunk
	}
	for _, hh := range hists[1:] {
		in := make(chan *job, 1)
		hw.in = append(hw.in, in)
		go func() {
			for j := range in {
				var c Counts
				hw.work(j, hh, &c)
				hw.done <- c
			}
		}()
	}
	return hw
}

// Close stops the helper goroutines. The walker cannot be used after.
func (hw *HistWalker) Close() {
	if !hw.closed {
		hw.closed = true
		for _, in := range hw.in {
			close(in)
		}
		if hw.p32 != nil {
			hw.p32.mem.release()
			hw.p32.st = nil
		}
		if hw.p64 != nil {
			hw.p64.mem.release()
			hw.p64.st = nil
		}
	}
}

// Start grows the histograms for window w (see [GapHistogram.Grow]) and
// sets the helpers walking it. w.Index must be the number of windows walked
// so far, w must stay intact until [HistWalker.Wait] returns, and Wait must
// be called before the histograms are drained or the next Start.
func (hw *HistWalker) Start(w *Window) {
	if w.Index != hw.windows || hw.cur != nil {
		panic("trace: HistWalker fed windows out of order")
	}
	hw.windows++
	hw.cur = w
	hw.pages += w.NumNew()
	for _, h := range hw.hists {
		h.Grow(w.Index)
	}
	if hw.p32 != nil && w.Index > hw.limit {
		hw.p64, hw.p32 = widen(hw.p32, hw.hists[0]), nil
		hw.walk = hw.p64.chunk
	}
	if hw.p32 != nil {
		hw.p32.grow(hw.pages, hw.hists[0])
	} else {
		hw.p64.grow(hw.pages, hw.hists[0])
	}
	hw.sent = hw.send(Access, w.Accessed, 1)
}

// send prepares the job of a phase, and sets the helpers on it if the list
// has more than min IDs. It returns whether it did.
func (hw *HistWalker) send(kind Kind, ids []uint32, min int) bool {
	j := &hw.jobs[kind]
	j.kind, j.ids, j.w = kind, ids, hw.cur.Index
	j.next.Store(0)
	if len(hw.in) == 0 || len(ids) < min {
		return false
	}
	for _, in := range hw.in {
		in <- j
	}
	return true
}

// phase walks one list: with the helpers if sent, then waits for them.
func (hw *HistWalker) phase(kind Kind, sent bool, c *Counts) {
	j := &hw.jobs[kind]
	if !sent {
		hw.walk(hw.hists[0], kind, j.ids, j.w, c)
		return
	}
	hw.work(j, hw.hists[0], c)
	for range hw.in {
		hc := <-hw.done
		c.add(&hc)
	}
}

// work claims and walks chunks of j until none is left.
func (hw *HistWalker) work(j *job, h *GapHistogram, c *Counts) {
	for {
		lo := int(j.next.Add(1)-1) * hw.chunk
		if lo >= len(j.ids) {
			return
		}
		hw.walk(h, j.kind, j.ids[lo:min(lo+hw.chunk, len(j.ids))], j.w, c)
	}
}

// Wait walks, with the helpers, what is left of the window given to Start,
// and returns when it is walked.
func (hw *HistWalker) Wait() {
	w := hw.cur
	var c Counts
	hw.phase(Access, hw.sent, &c)
	// Births and frees are short lists in most traces: the helpers join in
	// only when there are chunks to share.
	for _, kind := range []Kind{Birth, Free} {
		ids := w.Born
		if kind == Free {
			// Every page alive now is alive in this window, including
			// those freed at its end.
			alive := hw.Counts.Alive + c.Lives
			hw.Counts.AlivePageWins += alive
			hw.Counts.PeakAlive = max(hw.Counts.PeakAlive, alive)
			ids = w.Freed
		}
		hw.phase(kind, hw.send(kind, ids, hw.chunk+1), &c)
	}
	c.AccessRecords = int64(len(w.Accessed))
	c.OpenGaps = c.Frees
	c.Alive = c.Lives - c.Frees
	hw.Counts.add(&c)
	hw.cur = nil
}

// Window walks w: Start and Wait.
func (hw *HistWalker) Window(w *Window) {
	hw.Start(w)
	hw.Wait()
}

// Finish ends every life still alive at the end of the trace (e = W, the
// number of windows walked) and counts their open gaps in hists[0].
func (hw *HistWalker) Finish() {
	var c Counts
	if hw.p32 != nil {
		hw.p32.finish(hw.hists[0], hw.windows, &c)
	} else {
		hw.p64.finish(hw.hists[0], hw.windows, &c)
	}
	hw.Counts.OpenGaps += c.OpenGaps
	hw.Counts.Alive -= c.OpenGaps
}

// packed is a HistWalker's page state in words of type S.
type packed[S uint32 | uint64] struct {
	st    []S // by dense ID
	mem   stateMem
	heap  bool // st is on the heap (the mapping failed, or widened)
	shift uint // the class bits start here
	low   S    // mask of the last-touch bits
	cls   []S  // cls[d]: class of prior reuse distance d, shifted
	inf   S    // class of an infinite distance, shifted
}

func newPacked[S uint32 | uint64](h *GapHistogram, shift uint) *packed[S] {
	// Go defines shifts by the width or more: a class of 0 bits in a
	// uint32 word gives low = 1<<32 - 1.
	return &packed[S]{shift: shift, low: S(1)<<shift - 1, inf: S(h.infClass) << shift}
}

// limit is the largest window index the packing can hold: (index+1) must
// fit in low, and index+1 < low keeps a margin.
func (p *packed[S]) limit() int { return int(p.low) - 2 }

// widen returns p as 8-byte words.
func widen(p *packed[uint32], h *GapHistogram) *packed[uint64] {
	q := newPacked[uint64](h, 32)
	q.heap = true
	q.st = make([]uint64, len(p.st), cap(p.st))
	for x, s := range p.st {
		if s != 0 {
			q.st[x] = uint64(s&p.low) | uint64(s>>p.shift)<<32
		}
	}
	p.mem.release()
	return q
}

// grow makes room for pages pages and for the prior reuse distances h can
// class.
func (p *packed[S]) grow(pages int, h *GapHistogram) {
	old := len(p.st)
	if len(p.st) < pages && !p.heap {
		var w S
		if b, ok := p.mem.grow(pages * int(unsafe.Sizeof(w))); ok {
			p.st = words[S](b, pages) // the mapping's new pages are zero
		} else {
			p.heap = true
			st := make([]S, len(p.st), pages+pages/4)
			copy(st, p.st)
			p.mem.release()
			p.st = st
		}
	}
	if len(p.st) < pages {
		if cap(p.st) < pages {
			// Grow by a quarter, not by doubling: the state is most of
			// the generator's memory.
			st := make([]S, pages, pages+pages/4)
			copy(st, p.st)
			p.st = st
		} else {
			p.st = p.st[:pages] // zeros: nothing cuts the slice back
		}
	}
	if old < len(p.st) {
		prefault(p.st[old:])
	}
	for d := len(p.cls); d < len(h.classOf); d++ {
		p.cls = append(p.cls, S(h.classOf[d])<<p.shift)
	}
}

// prefault stores a zero (what they hold) into every 4 KiB page of st, so
// that each page is faulted in by a write. The walk's first touch of a
// word reads it, then writes it: on a fresh page the read maps the kernel's
// zero page and the write replaces it, a second fault whose TLB flush
// interrupts every other CPU running the process's threads (on the
// benchmark trace's 2-worker pass, 5% of its CPU went to those flushes,
// each an inter-processor interrupt, a VM exit in a guest). Every ID below
// the state's length is walked, so this faults in no page that the walk
// would not.
func prefault[S uint32 | uint64](st []S) {
	var w S
	step := 4096 / int(unsafe.Sizeof(w))
	for i := 0; i < len(st); i += step {
		st[i] = 0
	}
	st[len(st)-1] = 0 // the last page, where the last step fell short of it
}

// chunk walks ids, part of window w's list of the given kind, counting gaps
// into h and events into c. It is the hot loop of the generator.
func (p *packed[S]) chunk(h *GapHistogram, kind Kind, ids []uint32, w int, c *Counts) {
	k := S(w) + 1 // the word's last-touch bits for a touch in this window
	st, low, shift, inf := p.st, p.low, p.shift, p.inf
	nc := h.classes
	switch kind {
	case Access:
		cells, cls := h.closed, p.cls
		var lives, gaps int64
		for _, id := range ids {
			s := st[id]
			if s == 0 {
				st[id] = k | inf
				lives++
				continue
			}
			d := k - s&low // the reuse distance: >= 1
			cell := int(d-1)*nc + int(s>>shift)
			if cells[cell] == 0 {
				h.ctouch = append(h.ctouch, cell)
			}
			cells[cell]++
			st[id] = k | cls[d]
			gaps++
		}
		c.Lives += lives
		c.ClosedGaps += gaps
	case Birth:
		for _, id := range ids {
			switch s := st[id]; {
			case s == 0:
				st[id] = k | inf
				c.Lives++
				c.Births++
			case s&low == k:
				// Accessed in this window already: the access wins.
			default:
				c.IgnoredBirths++
			}
		}
	case Free:
		// The life ends in e = w+1: its open gap after the last touch i
		// idles e-i-1 = k - (i+1) windows.
		cells := h.open
		for _, id := range ids {
			s := st[id]
			if s == 0 {
				c.IgnoredFrees++
				continue
			}
			cell := int(k-s&low)*nc + int(s>>shift)
			if cells[cell] == 0 {
				h.otouch = append(h.otouch, cell)
			}
			cells[cell]++
			st[id] = 0
			c.Frees++
		}
	}
}

// finish ends every life at e = windows: an open gap after the last touch i
// idles e - (i+1) windows.
func (p *packed[S]) finish(h *GapHistogram, windows int, c *Counts) {
	e := S(windows)
	for x, s := range p.st {
		if s != 0 {
			h.add(false, int(e-s&p.low), int(s>>p.shift))
			p.st[x] = 0
			c.OpenGaps++
		}
	}
}

// add adds the additive counts of c to wc.
func (wc *Counts) add(c *Counts) {
	wc.Lives += c.Lives
	wc.Births += c.Births
	wc.Frees += c.Frees
	wc.IgnoredBirths += c.IgnoredBirths
	wc.IgnoredFrees += c.IgnoredFrees
	wc.AccessRecords += c.AccessRecords
	wc.Alive += c.Alive
	wc.ClosedGaps += c.ClosedGaps
	wc.OpenGaps += c.OpenGaps
}
