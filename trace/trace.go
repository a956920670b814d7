package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// DefaultMaxWindows is the default of [MaxWindows].
const DefaultMaxWindows = 1 << 24

// MaxWindows bounds the windows a text trace may declare or reach. A text
// trace's empty windows cost nothing in the file (a "windows" header, or an
// event in a far window, implies them), but every per-window table of the
// tools reading it grows with them; the bound keeps a few bytes of input
// from claiming gigabytes. A binary trace stores every window as a block,
// so its windows grow with its size. mdk's --max-windows sets it.
var MaxWindows = DefaultMaxWindows

// Default header values (SPEC section 1).
const (
	DefaultPageSize = 4096
	DefaultWindow   = 30 * time.Second
)

// Inf is the prior reuse distance of a life's first touch, and the value of
// an infinite window-count parameter. Comparisons such as d > P then need no
// special case: Inf > Inf is false.
const Inf = math.MaxInt

// Page names a page by its address space and page number.
type Page struct {
	Space uint32
	Page  uint64
}

// String formats p as in the text format: "page" in space 0, else "space/page".
func (p Page) String() string {
	if p.Space == 0 {
		return strconv.FormatUint(p.Page, 10)
	}
	return strconv.FormatUint(uint64(p.Space), 10) + "/" + strconv.FormatUint(p.Page, 10)
}

// Kind is one of the three event kinds.
type Kind uint8

const (
	Access Kind = iota // a: accessed at least once in the window
	Birth              // b: became present without being seen accessed
	Free               // f: gone at the end of the window
)

// String returns the text-format letter of k.
func (k Kind) String() string {
	switch k {
	case Access:
		return "a"
	case Birth:
		return "b"
	case Free:
		return "f"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Header is a trace's metadata.
type Header struct {
	PageSize int           // bytes per page
	Window   time.Duration // length of one window
	Windows  int           // number of windows W; 0 when not known before the end
	Source   string        // free-form description of where the trace came from
	// Sample, if not zero, says the trace holds only the pages this sample
	// keeps (mdk record --sample): every count is of those pages, and
	// commands scale them by Sample.Scale().
	Sample Sample
}

// DefaultHeader returns a header with the SPEC defaults.
func DefaultHeader() Header {
	return Header{PageSize: DefaultPageSize, Window: DefaultWindow}
}

// Window is one window's events. Pages are given by dense ID.
//
// Readers guarantee: Index is one more than the previous window's (starting
// at 0); each of Accessed, Born and Freed holds distinct IDs; every ID is
// below the number of pages announced so far, this window's New included.
// The same page may appear in several lists; the semantics of that (an access
// wins over a birth, a free applies after both) belong to the engines
// ([Walker] and the reference simulator).
type Window struct {
	Index int
	// New lists the pages that appear for the first time in this window.
	// Their dense IDs are consecutive, continuing from the pages seen before.
	New []Page
	// Unlisted counts the new pages not in New: a reader told to count new
	// pages only ([NewCounter]) leaves New empty and counts them here.
	// [Window.NumNew] is the window's number of new pages either way.
	Unlisted int
	Accessed []uint32
	Born     []uint32
	Freed    []uint32
}

// NumNew returns the number of pages that appear for the first time in w,
// listed in New or not.
func (w *Window) NumNew() int { return len(w.New) + w.Unlisted }

// Reset empties w for reuse, keeping its storage.
func (w *Window) Reset(index int) {
	w.Index = index
	w.New = w.New[:0]
	w.Unlisted = 0
	w.Accessed = w.Accessed[:0]
	w.Born = w.Born[:0]
	w.Freed = w.Freed[:0]
}

// Records returns the number of event records in w (accesses, births and
// frees). Accesses alone are len(w.Accessed).
func (w *Window) Records() int { return len(w.Accessed) + len(w.Born) + len(w.Freed) }

// Clone returns a deep copy of w.
func (w *Window) Clone() Window {
	return Window{
		Index:    w.Index,
		New:      append([]Page(nil), w.New...),
		Unlisted: w.Unlisted,
		Accessed: append([]uint32(nil), w.Accessed...),
		Born:     append([]uint32(nil), w.Born...),
		Freed:    append([]uint32(nil), w.Freed...),
	}
}

// Reader streams a trace one window at a time.
//
// Read returns the next window, or io.EOF after the last one. The returned
// window is owned by the reader and valid only until the next call to Read; a
// caller should copy anything it needs to retain. After an error other than
// io.EOF, every window returned before it was intact, and the error says where
// the damage is.
type Reader interface {
	Header() Header
	Read() (*Window, error)
	// Pages returns every page announced so far, indexed by dense ID. The
	// slice must not be modified; it may be reallocated by the next Read.
	Pages() []Page
}

// PageDiscarder is implemented by readers that can stop keeping their page
// table when the consumer needs dense IDs only (the curve generator): after
// DiscardPages, Pages no longer grows.
type PageDiscarder interface {
	DiscardPages()
}

// NewCounter is implemented by readers that can count each window's new
// pages instead of listing them, when the consumer needs their number only
// (the curve generator): after CountNew, every window has an empty New and
// its new pages in Unlisted, and the reader keeps no page table (as after
// DiscardPages). It saves 16 bytes a new page of the largest windows.
type NewCounter interface {
	CountNew()
}

// DoubleBufferer is implemented by readers that can keep two windows: after
// DoubleBuffer, a window returned by Read, and the lists it holds, stay
// intact until the second Read after it. See [Lookahead].
type DoubleBufferer interface {
	DoubleBuffer()
}

// Lookahead returns a reader of r's windows in which each window stays
// intact until the second Read after it, so that a consumer can read window
// w+1 while it still works on window w. A reader that can (DoubleBufferer)
// does it itself and is returned as is; the windows of others are copied.
// Call it after DiscardPages, if at all: the copy does not forward it.
func Lookahead(r Reader) Reader {
	if d, ok := r.(DoubleBufferer); ok {
		d.DoubleBuffer()
		return r
	}
	return &lookahead{Reader: r}
}

type lookahead struct {
	Reader
	wins [2]Window
	cur  int
}

func (la *lookahead) Read() (*Window, error) {
	w, err := la.Reader.Read()
	if err != nil {
		return nil, err
	}
	c := &la.wins[la.cur]
	la.cur ^= 1
	c.Index = w.Index
	c.New = append(c.New[:0], w.New...)
	c.Unlisted = w.Unlisted
	c.Accessed = append(c.Accessed[:0], w.Accessed...)
	c.Born = append(c.Born[:0], w.Born...)
	c.Freed = append(c.Freed[:0], w.Freed...)
	return c, nil
}

// Writer writes a trace one window at a time. Windows must be written in
// order, starting at 0, with Index consecutive; New must announce each page
// before its first use, as a Reader does.
type Writer interface {
	WriteWindow(w *Window) error
	// Close flushes everything and finishes the file. It does not close the
	// underlying io.Writer.
	Close() error
}

// Copy writes every window of r to w, then closes w. It returns the number of
// windows copied.
func Copy(w Writer, r Reader) (int, error) {
	n := 0
	for {
		win, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		if err := w.WriteWindow(win); err != nil {
			return n, err
		}
		n++
	}
	return n, w.Close()
}
