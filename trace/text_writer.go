package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// textWriter writes the text format. Per page it holds the Page, an index
// entry and three stamps.
type textWriter struct {
	bw    *bufio.Writer
	h     Header
	check writeCheck // next window, pages announced so far
	ids   pageIndex
	pages []Page
	stamp [3][]uint32 // as in textReader, to reject repeated IDs in a list

	lastNonEmpty int // -1 before any event
	emitted      []bool
	buf          []byte
	err          error
}

// NewTextWriter returns a Writer of the text trace format. It writes the
// version line and the headers at once: page-size, window, windows (if
// h.Windows > 0) and source (if not empty). Each window becomes one line per
// non-empty event kind (a, b, f), split every 64 pages, with pages formatted
// as [Page.String].
//
// The writer checks what it is given: windows in order from 0, page IDs that
// were announced, no page announced twice, no ID twice in one list, and every
// announced page used in its window (the text format announces a page by its
// first use). Pages are written so that a reader assigns them the same dense
// IDs whenever the window allows it, which is always the case for windows
// read from a text trace or built by a [Builder]; otherwise only the
// numbering differs.
//
// With h.Windows > 0, Close fails unless exactly h.Windows windows were
// written. With h.Windows == 0, trailing empty windows are kept by a last
// event line without pages (`9 a`), which sets the window count of the
// file.
func NewTextWriter(w io.Writer, h Header) (Writer, error) {
	check, err := checkHeader("text", h, maxTextInt, maxTextInt, math.MaxUint32)
	if err != nil {
		return nil, err
	}
	t := &textWriter{bw: bufio.NewWriterSize(w, 64<<10), h: h, check: check, ids: newPageIndex(), lastNonEmpty: -1}
	b := fmt.Appendf(nil, "%s %d\npage-size %d\nwindow %s\n", textMagic, textVersion, h.PageSize, FormatDuration(h.Window))
	if h.Windows > 0 {
		b = fmt.Appendf(b, "windows %d\n", h.Windows)
	}
	if !h.Sample.All() {
		if err := h.Sample.Validate(); err != nil {
			return nil, fmt.Errorf("trace: text writer: %w", err)
		}
		b = fmt.Appendf(b, "sample %s\n", h.Sample)
	}
	if h.Source != "" {
		b = append(b, "source "...)
		if plainSource(h.Source) {
			b = append(b, h.Source...)
		} else {
			b = strconv.AppendQuote(b, h.Source)
		}
		b = append(b, '\n')
	}
	if _, err := t.bw.Write(b); err != nil {
		return nil, err
	}
	return t, nil
}

// plainSource reports whether s can be written unquoted and read back as is.
func plainSource(s string) bool {
	if !utf8.ValidString(s) || s[0] == '"' || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '#' {
			return false
		}
	}
	return true
}

// fail makes err the writer's sticky error.
func (t *textWriter) fail(err error) error {
	t.err = err
	return err
}

// WriteWindow writes one window. On error nothing of the window is written
// and the writer keeps returning the error.
//
// Events are ordered so that new pages first appear in the order of w.New:
// the lists are merged greedily, staying on one kind while its next page is
// already announced or is the next new page.
func (t *textWriter) WriteWindow(w *Window) error {
	if t.err != nil {
		return t.err
	}
	if err := t.check.start(w); err != nil {
		return t.fail(err)
	}
	firstNew := uint32(len(t.pages))
	for _, p := range w.New {
		if _, ok := t.ids.lookup(p); ok {
			return t.fail(t.check.announcedTwice(p))
		}
		t.ids.insert(p, uint32(len(t.pages)))
		t.pages = append(t.pages, p)
		for k := range t.stamp {
			t.stamp[k] = append(t.stamp[k], 0)
		}
	}
	gen := uint32(w.Index) + 1
	lists := [3][]uint32{w.Accessed, w.Born, w.Freed}
	for k, list := range lists {
		st := t.stamp[k]
		for _, id := range list {
			if id >= uint32(len(t.pages)) {
				return t.fail(t.check.unannounced(Kind(k), id, len(w.New)))
			}
			if st[id] == gen {
				return t.fail(t.check.listedTwice(Kind(k), t.pages[id].String()))
			}
			st[id] = gen
		}
	}

	t.emitted = t.emitted[:0]
	for range w.New {
		t.emitted = append(t.emitted, false)
	}
	nextNew := firstNew
	ready := func(id uint32) bool { return id < firstNew || id <= nextNew || t.emitted[id-firstNew] }
	var cur [3]int   // next position in each list
	kind, n := -1, 0 // kind of the open line and its page count
	b := t.buf[:0]
	for {
		k := -1
		if kind >= 0 && cur[kind] < len(lists[kind]) && ready(lists[kind][cur[kind]]) {
			k = kind
		} else {
			fallback := -1
			for j := range lists {
				if cur[j] < len(lists[j]) {
					if ready(lists[j][cur[j]]) {
						k = j
						break
					}
					if fallback < 0 {
						fallback = j
					}
				}
			}
			if k < 0 {
				k = fallback // the order of w.New cannot be kept
			}
		}
		if k < 0 {
			break
		}
		if k != kind || n == maxLinePages {
			if kind >= 0 {
				b = append(b, '\n')
			}
			b = strconv.AppendInt(b, int64(w.Index), 10)
			b = append(b, ' ', "abf"[k])
			kind, n = k, 0
		}
		id := lists[k][cur[k]]
		cur[k]++
		n++
		if id >= firstNew {
			t.emitted[id-firstNew] = true
			for nextNew < uint32(len(t.pages)) && t.emitted[nextNew-firstNew] {
				nextNew++
			}
		}
		p := t.pages[id]
		b = append(b, ' ')
		if p.Space != 0 {
			b = strconv.AppendUint(b, uint64(p.Space), 10)
			b = append(b, '/')
		}
		b = strconv.AppendUint(b, p.Page, 10)
	}
	if kind >= 0 {
		b = append(b, '\n')
		t.lastNonEmpty = w.Index
	}
	t.buf = b
	if nextNew != uint32(len(t.pages)) {
		return t.fail(t.check.errorf("page %v is announced but has no event in the window, which the text format cannot express", t.pages[nextNew]))
	}
	if _, err := t.bw.Write(b); err != nil {
		t.err = err
		return err
	}
	t.check.done(len(w.New))
	return nil
}

// Close writes what is still buffered; see [NewTextWriter] for the checks it
// makes and how trailing empty windows are kept.
// Flush writes every completed window to the underlying writer, so that a
// writer killed afterwards leaves them readable (recorders call it after
// each window). Trailing empty windows of a trace without a `windows`
// header are written only by Close.
func (t *textWriter) Flush() error {
	if t.err != nil {
		return t.err
	}
	if err := t.bw.Flush(); err != nil {
		t.err = err
		return err
	}
	return nil
}

func (t *textWriter) Close() error {
	if t.err != nil {
		return t.err
	}
	if err := t.check.closing(); err != nil {
		t.bw.Flush()
		return t.fail(err)
	}
	if t.h.Windows == 0 && t.check.next > t.lastNonEmpty+1 {
		fmt.Fprintf(t.bw, "%d a\n", t.check.next-1)
	}
	if err := t.bw.Flush(); err != nil {
		t.err = err
		return err
	}
	t.err = errors.New("trace: text writer: already closed")
	return nil
}
