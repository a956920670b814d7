package importer

import (
	"errors"
	"fmt"
	"math"

	"mdk/trace"
)

// ErrBackwards is returned by [Windower.Access] for a window before the
// current one.
var ErrBackwards = errors.New("importer: window goes backwards")

// ErrTooManyWindows is returned by [Windower.Access] for a window index at or
// beyond the configured maximum.
var ErrTooManyWindows = errors.New("importer: too many windows")

// ErrTooManyPages is returned when a trace has more distinct pages than dense
// uint32 IDs can name.
var ErrTooManyPages = errors.New("importer: too many distinct pages")

// Windower turns a stream of (window, page) accesses, given in
// non-decreasing window order, into [trace.Window] values written to a
// [trace.Writer].
//
// It assigns dense page IDs in order of first appearance, announces each page
// in the New list of the window where it first appears, lists each accessed
// page once per window, and writes every window from 0 to the last one with
// an access, empty ones included. Its memory is proportional to the number of
// distinct pages (at most one 64-byte map entry per page, much less for
// neighbouring pages, and 4 bytes of "last window" per page) plus the largest
// window.
const chunkShift = 4

// idChunk holds dense ID + 1 of each page of a chunk, 0 for pages not seen.
type idChunk [1 << chunkShift]uint32

type Windower struct {
	w          trace.Writer
	maxWindows int64

	// ids0 maps page>>chunkShift of a space-0 page (the common case) to the
	// IDs+1 of its chunk of 1<<chunkShift pages (0: not seen). Chunks make
	// runs of neighbouring pages, as block requests and DAMON regions give,
	// cost one map lookup per chunk instead of one per page.
	ids0 map[uint64]idChunk
	ids  map[trace.Page]uint32 // IDs of pages in other spaces
	last []int32               // last[id] is the last window in which id was accessed, -1 if none
	cur  int64                 // current window; -1 before the first access
	win  trace.Window

	// the chunk of the last space-0 page, a copy of ids0[chunkKey]
	chunk    idChunk
	chunkKey uint64
	hasChunk bool

	accesses int64 // page accesses given, duplicates included
	windows  int64 // windows written
}

// DefaultMaxWindows bounds the window index a [Windower] accepts by default,
// so that a corrupt timestamp cannot make an importer write billions of
// empty windows.
const DefaultMaxWindows = 1 << 24

// NewWindower returns a Windower writing to w. Window indices must be below
// maxWindows (at most math.MaxInt32; 0 means [DefaultMaxWindows]).
func NewWindower(w trace.Writer, maxWindows int64) *Windower {
	if maxWindows <= 0 {
		maxWindows = DefaultMaxWindows
	}
	if maxWindows > math.MaxInt32 {
		maxWindows = math.MaxInt32
	}
	return &Windower{w: w, maxWindows: maxWindows, ids0: map[uint64]idChunk{}, ids: map[trace.Page]uint32{}, cur: -1}
}

// Current returns the current window index, or -1 before the first access.
func (x *Windower) Current() int64 { return x.cur }

// Advance moves to window w, writing every window before it. It is how an
// importer makes empty trailing windows exist, and it is called by Access.
func (x *Windower) Advance(w int64) error {
	if w < x.cur {
		return fmt.Errorf("%w: window %d after window %d", ErrBackwards, w, x.cur)
	}
	if w >= x.maxWindows {
		return fmt.Errorf("%w: window %d is beyond the limit of %d windows", ErrTooManyWindows, w, x.maxWindows)
	}
	if w == x.cur {
		return nil
	}
	if x.cur < 0 {
		x.cur = 0
		x.win.Reset(0)
	}
	for x.cur < w {
		if err := x.flush(); err != nil {
			return err
		}
		x.cur++
		x.win.Reset(int(x.cur))
	}
	return nil
}

func (x *Windower) flush() error {
	if err := x.w.WriteWindow(&x.win); err != nil {
		return err
	}
	x.windows++
	return nil
}

// Access records that page p was accessed in window w.
func (x *Windower) Access(w int64, p trace.Page) error {
	if w != x.cur {
		if err := x.Advance(w); err != nil {
			return err
		}
	}
	var id uint32
	if p.Space == 0 {
		key := p.Page >> chunkShift
		if !x.hasChunk || key != x.chunkKey {
			x.chunk = x.ids0[key]
			x.chunkKey, x.hasChunk = key, true
		}
		slot := &x.chunk[p.Page&(1<<chunkShift-1)]
		if *slot == 0 {
			nid, err := x.newID(p)
			if err != nil {
				return err
			}
			*slot = nid + 1
			x.ids0[key] = x.chunk
		}
		id = *slot - 1
	} else {
		var ok bool
		id, ok = x.ids[p]
		if !ok {
			var err error
			if id, err = x.newID(p); err != nil {
				return err
			}
			x.ids[p] = id
		}
	}
	x.accesses++
	if x.last[id] != int32(w) {
		x.last[id] = int32(w)
		x.win.Accessed = append(x.win.Accessed, id)
	}
	return nil
}

// newID gives p the next dense ID and announces it.
func (x *Windower) newID(p trace.Page) (uint32, error) {
	if len(x.last) >= math.MaxUint32-1 {
		return 0, fmt.Errorf("%w: more than %d", ErrTooManyPages, uint64(math.MaxUint32-1))
	}
	id := uint32(len(x.last))
	x.last = append(x.last, -1)
	x.win.New = append(x.win.New, p)
	return id, nil
}

// AccessRange records that pages first..last (inclusive) of space were
// accessed in window w.
func (x *Windower) AccessRange(w int64, space uint32, first, last uint64) error {
	for p := first; ; p++ {
		if err := x.Access(w, trace.Page{Space: space, Page: p}); err != nil {
			return err
		}
		if p == last {
			return nil
		}
	}
}

// Close writes the last window, if any, and closes the writer.
func (x *Windower) Close() error {
	if x.cur >= 0 {
		if err := x.flush(); err != nil {
			return err
		}
		x.cur = math.MaxInt64 // no more accesses
	}
	return x.w.Close()
}

// Pages returns the number of distinct pages seen.
func (x *Windower) Pages() int64 { return int64(len(x.last)) }

// Accesses returns the number of page accesses given, duplicates included.
func (x *Windower) Accesses() int64 { return x.accesses }

// Windows returns the number of windows written so far.
func (x *Windower) Windows() int64 { return x.windows }
