package trace

import "fmt"

// writeCheck is the Window contract as both writers check it: a header
// within the format's limits; windows in order from 0, no more than the
// header's count (when it has one) nor the format's limit; page IDs that
// were announced, no ID twice in one list, no page announced twice. How a
// writer detects a repeated ID or page depends on its encoding (stamps in
// the text writer, sorting in the binary one); what it says does not: every
// error comes from here and reads "trace: FORMAT writer: window N: ...".
type writeCheck struct {
	format     string // "text" or "binary"
	h          Header
	maxWindows uint64 // windows the format can hold
	maxPages   uint64 // distinct pages the format can hold
	next       int    // index of the next window
	pages      int    // pages announced before the current window
}

// checkHeader checks h against the format's limits and returns the check of
// the windows to come.
func checkHeader(format string, h Header, maxPageSize int, maxWindows, maxPages uint64) (writeCheck, error) {
	c := writeCheck{format: format, h: h, maxWindows: maxWindows, maxPages: maxPages}
	switch {
	case h.PageSize < 1 || h.PageSize > maxPageSize:
		return c, fmt.Errorf("trace: %s writer: page size %d out of range 1..%d", format, h.PageSize, maxPageSize)
	case h.Window <= 0:
		return c, fmt.Errorf("trace: %s writer: window length %v is not positive", format, h.Window)
	case h.Windows < 0 || uint64(h.Windows) > maxWindows:
		return c, fmt.Errorf("trace: %s writer: window count %d out of range 0..%d", format, h.Windows, maxWindows)
	}
	return c, nil
}

// errorf is an error in the current window.
func (c *writeCheck) errorf(format string, args ...any) error {
	return fmt.Errorf("trace: %s writer: window %d: %s", c.format, c.next, fmt.Sprintf(format, args...))
}

// start checks w's index and its count of new pages.
func (c *writeCheck) start(w *Window) error {
	switch {
	case w.Index != c.next:
		return c.errorf("got window index %d, want %d", w.Index, c.next)
	case c.h.Windows > 0 && w.Index >= c.h.Windows:
		return c.errorf("beyond the %d windows of the header", c.h.Windows)
	case uint64(w.Index) >= c.maxWindows:
		return c.errorf("more than %d windows", c.maxWindows)
	case uint64(c.pages)+uint64(len(w.New)) > c.maxPages:
		return c.errorf("more than %d distinct pages", c.maxPages)
	}
	return nil
}

// unannounced is the error of an ID in list k that no page has; the
// current window announces n pages.
func (c *writeCheck) unannounced(k Kind, id uint32, n int) error {
	return c.errorf("%v list has page ID %d, but only %d pages were announced", k, id, c.pages+n)
}

// listedTwice is the error of a page twice in list k.
func (c *writeCheck) listedTwice(k Kind, page string) error {
	return c.errorf("%v list has page %s twice", k, page)
}

// announcedTwice is the error of a page announced in two windows or twice
// in one.
func (c *writeCheck) announcedTwice(p Page) error {
	return c.errorf("page %v announced twice", p)
}

// done records a window written with n new pages.
func (c *writeCheck) done(n int) {
	c.pages += n
	c.next++
}

// closing checks the window count at Close.
func (c *writeCheck) closing() error {
	if c.h.Windows > 0 && c.next != c.h.Windows {
		return fmt.Errorf("trace: %s writer: closed after %d windows, but the header says %d", c.format, c.next, c.h.Windows)
	}
	return nil
}
