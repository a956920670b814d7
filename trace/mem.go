package trace

import (
	"errors"
	"fmt"
	"io"
)

// Trace is a whole trace held in memory. Tests and the reference simulator
// use it; streaming engines use a [Reader].
type Trace struct {
	Header  Header
	Pages   []Page   // by dense ID
	Windows []Window // Windows[w].Index == w
}

// ReadAll reads every window of r into memory. On error it returns the
// intact prefix read so far along with the error.
func ReadAll(r Reader) (*Trace, error) {
	t := &Trace{Header: r.Header()}
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Pages = append([]Page(nil), r.Pages()...)
			t.Header.Windows = len(t.Windows)
			return t, err
		}
		t.Windows = append(t.Windows, w.Clone())
	}
	t.Pages = append([]Page(nil), r.Pages()...)
	t.Header.Windows = len(t.Windows)
	return t, nil
}

// NewReader returns a Reader over t.
func (t *Trace) NewReader() Reader { return &memReader{t: t} }

type memReader struct {
	t     *Trace
	next  int
	pages int // pages announced so far
	wins  [2]Window
	cur   int
}

func (m *memReader) Header() Header { return m.t.Header }
func (m *memReader) Pages() []Page  { return m.t.Pages[:m.pages] }
func (m *memReader) DoubleBuffer()  {}

func (m *memReader) Read() (*Window, error) {
	if m.next >= len(m.t.Windows) {
		return nil, io.EOF
	}
	// Hand out a copy of the slice headers so a caller that appends to them
	// cannot corrupt t.
	win := &m.wins[m.cur]
	m.cur ^= 1 // always double-buffered: the lists are the trace's
	*win = m.t.Windows[m.next]
	m.next++
	m.pages += len(win.New)
	return win, nil
}

// Builder assembles a Trace from events given in any order. It is meant for
// tests, generators and importers that produce small traces. Events are
// deduplicated per window and kind; dense IDs are assigned in window order,
// then in the order events were added within a window.
type Builder struct {
	header Header
	events map[int][]builderEvent
	maxW   int
}

type builderEvent struct {
	kind Kind
	page Page
}

// NewBuilder returns a Builder for a trace with header h. If h.Windows is 0
// the trace ends after the last window with an event.
func NewBuilder(h Header) *Builder {
	return &Builder{header: h, events: map[int][]builderEvent{}, maxW: -1}
}

// Add records that pages had event kind in window w.
func (b *Builder) Add(w int, kind Kind, pages ...Page) {
	if w < 0 {
		panic(fmt.Sprintf("trace: Builder.Add with negative window %d", w))
	}
	for _, p := range pages {
		b.events[w] = append(b.events[w], builderEvent{kind, p})
	}
	if w > b.maxW {
		b.maxW = w
	}
}

// Trace returns the assembled trace.
func (b *Builder) Trace() *Trace {
	t := &Trace{Header: b.header}
	n := b.maxW + 1
	if b.header.Windows > n {
		n = b.header.Windows
	}
	t.Header.Windows = n
	ids := map[Page]uint32{}
	for w := 0; w < n; w++ {
		win := Window{Index: w}
		seen := [3]map[uint32]bool{{}, {}, {}}
		for _, ev := range b.events[w] {
			id, ok := ids[ev.page]
			if !ok {
				id = uint32(len(t.Pages))
				ids[ev.page] = id
				t.Pages = append(t.Pages, ev.page)
				win.New = append(win.New, ev.page)
			}
			if seen[ev.kind][id] {
				continue
			}
			seen[ev.kind][id] = true
			switch ev.kind {
			case Access:
				win.Accessed = append(win.Accessed, id)
			case Birth:
				win.Born = append(win.Born, id)
			case Free:
				win.Freed = append(win.Freed, id)
			}
		}
		t.Windows = append(t.Windows, win)
	}
	return t
}
