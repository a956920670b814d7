package trace

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Coarsen is a what-if transform of a trace (docs/whatif.md): pages of a
// larger size (PageFactor source pages each) and windows of a longer
// length (WindowFactor source windows each).
type Coarsen struct {
	PageFactor   int // a unit is source pages [u*PageFactor, (u+1)*PageFactor) of one space
	WindowFactor int // output window w' is source windows [w'*WindowFactor, (w'+1)*WindowFactor)
}

// CoarsenReader reads a trace through a [Coarsen] transform.
//
// A unit (an output page) is alive in an output window if any of its
// source pages is alive (SPEC section 1's lives) in any of the window's
// source windows. In output window w' a unit is
//   - accessed (a) if any of its source pages is accessed in any source
//     window of w';
//   - born (b) if it is alive in w', not accessed in w', and none of its
//     source pages is alive coming into w' (alive in the source window
//     before the first of w' and not freed there);
//   - freed (f) if it is alive in w' and none of its source pages is alive
//     after the last source window of w' (every one alive was freed by
//     then).
//
// So the output's lives are the maximal runs of output windows in which the
// unit is alive, and the model's ignored events (a birth of an alive page,
// a free of a page not alive) leave no trace. Within a window, each list
// and each window's new pages are in the order of the units' first
// effective event in the source window's lists (accesses, then births, then
// frees); dense IDs are given in that order. Memory: a few bytes per source
// page and per unit.
type CoarsenReader struct {
	src Reader
	c   Coarsen
	h   Header

	alive  []bool  // by source dense ID: the page is alive
	unitOf []int32 // by source dense ID: its unit, -1 until its first effective event
	ids    map[Page]uint32
	pages  []Page // by unit ID

	// By unit ID.
	count    []int32 // source pages alive now
	mark     []int32 // output window + 1 in which the unit has had an effective event
	startCnt []int32 // count when first marked in the window
	acc      []int32 // output window + 1 in which it was accessed

	group   []uint32 // units marked in the current output window, in order
	srcWins int      // source windows read
	out     Window
	eof     bool
}

// NewCoarsenReader returns r read through c. The page factor and window
// factor must be at least 1; a sampled trace (Header.Sample) cannot change
// page size, since its sample is of the source pages.
func NewCoarsenReader(r Reader, c Coarsen) (*CoarsenReader, error) {
	h := r.Header()
	if c.PageFactor < 1 || c.WindowFactor < 1 {
		return nil, fmt.Errorf("trace: coarsen: factors must be at least 1, got page %d, window %d", c.PageFactor, c.WindowFactor)
	}
	if c.PageFactor > 1 && !h.Sample.All() {
		return nil, fmt.Errorf("trace: coarsen: a %s sample of the pages cannot change page size (its sample is of the %d-byte pages)", h.Sample, h.PageSize)
	}
	if int64(h.PageSize)*int64(c.PageFactor) > 1<<40 {
		return nil, fmt.Errorf("trace: coarsen: page size %d x %d is too large", h.PageSize, c.PageFactor)
	}
	if h.Window > 0 && int64(h.Window) > int64(1<<62)/int64(c.WindowFactor) {
		return nil, fmt.Errorf("trace: coarsen: window %v x %d is too long", h.Window, c.WindowFactor)
	}
	h.PageSize *= c.PageFactor
	h.Window *= time.Duration(c.WindowFactor)
	if h.Windows > 0 {
		h.Windows = (h.Windows + c.WindowFactor - 1) / c.WindowFactor
	}
	return &CoarsenReader{src: r, c: c, h: h, ids: map[Page]uint32{}}, nil
}

// Header returns the output header: page size and window length multiplied
// by the factors, and the number of windows (if known) divided, rounded up.
func (cr *CoarsenReader) Header() Header { return cr.h }

// Pages returns the units announced so far, by dense ID.
func (cr *CoarsenReader) Pages() []Page { return cr.pages }

// unit returns the unit of source page id, creating it on its first
// effective event.
func (cr *CoarsenReader) unit(id uint32) uint32 {
	if u := cr.unitOf[id]; u >= 0 {
		return uint32(u)
	}
	p := cr.src.Pages()[id]
	up := Page{Space: p.Space, Page: p.Page / uint64(cr.c.PageFactor)}
	u, ok := cr.ids[up]
	if !ok {
		u = uint32(len(cr.pages))
		cr.ids[up] = u
		cr.pages = append(cr.pages, up)
		cr.out.New = append(cr.out.New, up)
		cr.count = append(cr.count, 0)
		cr.mark = append(cr.mark, 0)
		cr.startCnt = append(cr.startCnt, 0)
		cr.acc = append(cr.acc, 0)
	}
	cr.unitOf[id] = int32(u)
	return u
}

// touch notes an effective event of source page id in the current output
// window and returns its unit.
func (cr *CoarsenReader) touch(id uint32) uint32 {
	u := cr.unit(id)
	if g := int32(cr.out.Index + 1); cr.mark[u] != g {
		cr.mark[u] = g
		cr.startCnt[u] = cr.count[u]
		cr.group = append(cr.group, u)
	}
	return u
}

// Read returns the next output window, or io.EOF after the last one.
func (cr *CoarsenReader) Read() (*Window, error) {
	if cr.eof {
		return nil, io.EOF
	}
	index := cr.srcWins / cr.c.WindowFactor
	cr.out.Reset(index)
	cr.group = cr.group[:0]
	read := 0
	for read < cr.c.WindowFactor {
		w, err := cr.src.Read()
		if errors.Is(err, io.EOF) {
			cr.eof = true
			break
		}
		if err != nil {
			return nil, err
		}
		read++
		cr.srcWins++
		for range w.NumNew() {
			cr.alive = append(cr.alive, false)
			cr.unitOf = append(cr.unitOf, -1)
		}
		g := int32(index + 1)
		for _, id := range w.Accessed {
			u := cr.touch(id)
			cr.acc[u] = g
			if !cr.alive[id] {
				cr.alive[id] = true
				cr.count[u]++
			}
		}
		for _, id := range w.Born {
			if !cr.alive[id] { // an access in this window made it alive already
				u := cr.touch(id)
				cr.alive[id] = true
				cr.count[u]++
			}
		}
		for _, id := range w.Freed {
			if cr.alive[id] {
				u := cr.touch(id)
				cr.alive[id] = false
				cr.count[u]--
			}
		}
	}
	if read == 0 {
		return nil, io.EOF
	}
	g := int32(index + 1)
	for _, u := range cr.group {
		switch {
		case cr.acc[u] == g:
			cr.out.Accessed = append(cr.out.Accessed, u)
		case cr.startCnt[u] == 0:
			cr.out.Born = append(cr.out.Born, u)
		}
		if cr.count[u] == 0 {
			cr.out.Freed = append(cr.out.Freed, u)
		}
	}
	return &cr.out, nil
}
