package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Header keywords, indexed as in textReader.headerLine.
var textHeaders = [...]string{hdrPageSize: "page-size", hdrWindow: "window", hdrWindows: "windows", hdrSource: "source", hdrSample: "sample"}

const (
	hdrPageSize = iota
	hdrWindow
	hdrWindows
	hdrSource
	hdrSample
)

// textReader reads the text format. It reads one line ahead: the first event
// line of a window after the one being assembled is kept in pending until the
// next Read. Per page it holds the Page, one index entry and three stamps.
type textReader struct {
	br   *bufio.Reader
	name string
	line int    // number of the last line read
	long []byte // holds a line longer than br's buffer

	hdr        Header
	headerLine [len(textHeaders)]int // line of each header; 0 if absent

	ids   pageIndex // dense IDs of pages
	pages []Page    // by dense ID
	// stamp[k][id] is Index+1 of the last window whose list of kind k got id.
	// Window numbers fit in 31 bits, so stamps never wrap.
	stamp     [3][]uint32
	announced int // pages handed out by returned windows

	win  Window
	next int // index of the next window to return
	last int // window of the last event line read; -1 before any
	// firstEvent is the line of the first event line; 0 before any.
	firstEvent int
	eof        bool

	hasPending  bool
	pending     []byte // the event line for window pendingWin, after its window number
	pendingWin  int
	pendingLine int

	err error // sticky: io.EOF or the first error
}

// NewTextReader returns a Reader over the text trace format, version 1
// (SPEC section 3):
//
//	mdk-trace 1          # first line, required
//	page-size 4096       # optional headers, before the first event line
//	window 30s
//	windows 10           # optional; default: last window + 1
//	source my job on host x
//	sample 1% seed 7     # optional: the trace holds a sample of the pages
//	0 a 1 2 3            # <window> <a|b|f> <page>...
//	0 b 4
//	1 a 1 7/0x1f
//	4 f 5
//
// Details the SPEC leaves open, as this package reads and writes them:
//
//   - `#` starts a comment anywhere (also on the first line); blank lines are
//     ignored. Tokens are separated by spaces, tabs or a carriage return.
//   - Headers may come in any order, each at most once, and only before the
//     first event line. page-size and windows are positive decimal integers
//     (at most 2147483647); window is a positive Go duration (30s, 1m, 500ms,
//     1h30m). Their defaults are 4096, 30s and "last window + 1".
//   - `source TEXT` is an mdk extension holding [Header.Source], a free-form
//     description of where the trace came from: the rest of the line, without
//     its comment and surrounding blanks. To hold a `#`, a line break or
//     surrounding blanks, the text may instead be one Go double-quoted string
//     (`source "job #3\n"`), which is how the writer writes such a source.
//   - `sample RATE seed N` is an mdk extension holding [Header.Sample]: the
//     trace holds only the pages that sample keeps (docs/trace-format.md).
//     RATE is a percentage that divides 100% (10%, 1%, 0.1%), N a decimal
//     seed. A reader that does not know the header rejects the trace, so a
//     sampled trace is never read as a whole one.
//   - A window number is a decimal integer in 0..2147483647; event lines
//     never go back in window number, and with a windows header every event
//     window is below it. Several lines of one window and kind are merged,
//     and repeated pages are deduplicated.
//   - A page is `page` or `space/page`, each decimal or 0x-hex; space fits
//     in 32 bits and page in 64.
//   - An event line may list no pages (`9 a`). It records nothing but counts
//     as an event in window 9, so a trace without a windows header has at
//     least 10 windows; the writer uses it to keep trailing empty windows.
//   - A line may be at most 16 MiB long.
//
// Dense page IDs are assigned in order of first appearance in the file.
//
// NewTextReader reads the headers before returning, so Header is complete;
// Header().Windows is 0 when the trace has no windows header. name is used
// in error messages, which are *[SyntaxError] values for malformed input.
//
// The reader streams: it holds one line and the page table, never the file.
// After an error Read keeps returning it; every window returned before it
// was intact.
func NewTextReader(r io.Reader, name string) (Reader, error) {
	t := &textReader{
		br:   bufio.NewReaderSize(r, 64<<10),
		name: name,
		hdr:  DefaultHeader(),
		ids:  newPageIndex(),
		last: -1,
	}
	if err := t.readHeaders(); err != nil {
		return nil, err
	}
	return t, nil
}

func (r *textReader) Header() Header { return r.hdr }
func (r *textReader) Pages() []Page  { return r.pages[:r.announced] }

func (r *textReader) syntax(format string, args ...any) error {
	return &SyntaxError{File: r.name, Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

// readLine returns the next line without its line feed, or io.EOF. The line
// is valid until the next call.
func (r *textReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == nil {
		r.line++
		return line[:len(line)-1], nil
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			if len(r.long)+len(line) > maxTextLine+1 {
				r.line++
				return nil, r.syntax("line longer than %d bytes", maxTextLine)
			}
			r.long = append(r.long, line...)
		}
		if err == nil {
			r.line++
			return r.long[:len(r.long)-1], nil
		}
		line = r.long
	}
	if errors.Is(err, io.EOF) {
		if len(line) == 0 {
			return nil, io.EOF
		}
		r.line++
		return line, nil // the last line has no line feed
	}
	return nil, fmt.Errorf("read %s: %w", r.name, err)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// token splits off the first blank-separated token of b.
func token(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isBlank(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func stripComment(b []byte) []byte {
	if i := bytes.IndexByte(b, '#'); i >= 0 {
		return b[:i]
	}
	return b
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// readHeaders reads the version line and the headers, and keeps the first
// event line, if any, in pending.
func (r *textReader) readHeaders() error {
	const want = `expected "mdk-trace 1" as the first line`
	line, err := r.readLine()
	if errors.Is(err, io.EOF) {
		r.line = 1
		return r.syntax("empty file: %s", want)
	}
	if err != nil {
		return err
	}
	magic, rest := token(stripComment(line))
	if string(magic) != textMagic {
		return r.syntax("not an mdk text trace: %s, got %s", want, truncate(line))
	}
	ver, rest := token(rest)
	if len(ver) == 0 {
		return r.syntax("missing version: %s", want)
	}
	v, ok, over := parseDec(ver)
	if !ok {
		return r.syntax("bad version %s: %s", truncate(ver), want)
	}
	if over || v != textVersion {
		return r.syntax("unsupported text trace version %s (this mdk reads %d)", shorten(ver), textVersion)
	}
	if extra, _ := token(rest); len(extra) > 0 {
		return r.syntax("unexpected %s after the version: %s", truncate(extra), want)
	}
	for {
		line, err := r.readLine()
		if errors.Is(err, io.EOF) {
			r.eof = true
			return nil
		}
		if err != nil {
			return err
		}
		first, _ := token(line)
		if len(first) > 0 && isLetter(first[0]) {
			if err := r.header(line); err != nil {
				return err
			}
			continue
		}
		line = stripComment(line)
		if first, _ := token(line); len(first) == 0 {
			continue
		}
		w, rest, err := r.eventWindow(line)
		if err != nil {
			return err
		}
		r.setPending(w, rest)
		return nil
	}
}

// header parses a header line.
func (r *textReader) header(line []byte) error {
	// The keyword ends at a blank or a comment.
	i := 0
	for i < len(line) && isBlank(line[i]) {
		i++
	}
	j := i
	for j < len(line) && !isBlank(line[j]) && line[j] != '#' {
		j++
	}
	kw, rest := line[i:j], line[j:]
	k := -1
	for i, h := range textHeaders {
		if string(kw) == h {
			k = i
		}
	}
	if k < 0 {
		return r.syntax("unknown header %s: expected page-size, window, windows, source or sample, or an event line \"<window> <a|b|f> <page>...\"", truncate(kw))
	}
	if first := r.headerLine[k]; first > 0 {
		return r.syntax("duplicate header %q (first on line %d)", kw, first)
	}
	r.headerLine[k] = r.line
	switch k {
	case hdrSource:
		return r.source(rest)
	case hdrSample:
		s, err := parseSampleHeader(string(stripComment(rest)))
		if err != nil {
			return r.syntax("bad sample header: %v", err)
		}
		r.hdr.Sample = s
		return nil
	}
	const posInt = "expected a positive decimal integer up to 2147483647"
	expected, what := posInt, "page size"
	switch k {
	case hdrWindows:
		what = "window count"
	case hdrWindow:
		expected, what = "expected a positive duration such as 30s, 1m or 500ms", "window length"
	}
	val, rest := token(stripComment(rest))
	if len(val) == 0 {
		return r.syntax("missing value for %s: %s", kw, expected)
	}
	if extra, _ := token(rest); len(extra) > 0 {
		return r.syntax("unexpected %s after the %s: %s takes one value", truncate(extra), what, kw)
	}
	if k == hdrWindow {
		d, err := time.ParseDuration(string(val))
		if err != nil || d <= 0 {
			return r.syntax("bad %s %s: %s", what, truncate(val), expected)
		}
		r.hdr.Window = d
		return nil
	}
	v, ok, over := parseDec(val)
	if !ok || over || v == 0 || v > maxTextInt {
		return r.syntax("bad %s %s: %s", what, truncate(val), expected)
	}
	if k == hdrWindows {
		if int(v) > MaxWindows {
			return r.syntax("windows %d is more than the limit of %d windows (--max-windows raises it)", v, MaxWindows)
		}
		r.hdr.Windows = int(v)
	} else {
		r.hdr.PageSize = int(v)
	}
	return nil
}

// source parses the value of a source header: the rest of the line, or one
// Go double-quoted string.
func (r *textReader) source(rest []byte) error {
	s := strings.TrimLeft(string(rest), " \t\r")
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return r.syntax("bad quoted source %s: expected a Go double-quoted string", truncate([]byte(s)))
		}
		after := strings.TrimLeft(s[len(q):], " \t\r")
		if after != "" && after[0] != '#' {
			return r.syntax("unexpected %s after the quoted source", truncate([]byte(after)))
		}
		r.hdr.Source, _ = strconv.Unquote(q)
		return nil
	}
	s = strings.TrimRight(string(stripComment([]byte(s))), " \t\r")
	if s == "" {
		return r.syntax("missing value for source: expected a free-form description of the trace")
	}
	r.hdr.Source = s
	return nil
}

// truncate quotes b for an error message, cut after 64 bytes.
func truncate(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "..."
	}
	return strconv.Quote(string(b))
}

// shorten cuts a long number for an error message.
func shorten(b []byte) []byte {
	if len(b) > 24 {
		return append(b[:24:24], "..."...)
	}
	return b
}

// eventWindow parses the window number of an event line (comment already
// stripped, not blank) and checks it against the previous one and the
// windows header. It returns the rest of the line.
func (r *textReader) eventWindow(line []byte) (int, []byte, error) {
	tok, rest := token(line)
	if isLetter(tok[0]) {
		for _, h := range textHeaders {
			if string(tok) == h {
				return 0, nil, r.syntax("header %q after the first event line (line %d): headers must come before events", tok, r.firstEvent)
			}
		}
	}
	v, ok, over := parseDec(tok)
	if !ok {
		return 0, nil, r.syntax("bad window number %s: expected a non-negative decimal integer", truncate(tok))
	}
	if over || v > maxTextInt {
		return 0, nil, r.syntax("window number %s too large: expected at most %d", shorten(tok), maxTextInt)
	}
	w := int(v)
	if w >= MaxWindows {
		return 0, nil, r.syntax("event in window %d, beyond the limit of %d windows (--max-windows raises it)", w, MaxWindows)
	}
	if w < r.last {
		return 0, nil, r.syntax("window %d after window %d: event lines must not go back in window number", w, r.last)
	}
	if r.headerLine[hdrWindows] > 0 && w >= r.hdr.Windows {
		return 0, nil, r.syntax("event in window %d, but the windows header (line %d) says %d windows (0..%d)", w, r.headerLine[hdrWindows], r.hdr.Windows, r.hdr.Windows-1)
	}
	if r.last < 0 {
		r.firstEvent = r.line
	}
	r.last = w
	return w, rest, nil
}

func (r *textReader) setPending(w int, rest []byte) {
	r.hasPending = true
	r.pending = append(r.pending[:0], rest...)
	r.pendingWin = w
	r.pendingLine = r.line
}

// fail records err as the reader's sticky error and forgets the pages of the
// damaged window.
func (r *textReader) fail(err error) (*Window, error) {
	r.err = err
	r.pages = r.pages[:r.announced]
	return nil, err
}

// Read returns the next window:
//
//  1. If the pending event line belongs to a later window, the window is
//     empty; if it belongs to this one, apply it.
//  2. Read lines, applying those of this window, until an event line of a
//     later window (kept in pending) or the end of the file.
//  3. At the end of the file, windows continue up to the windows header, or
//     up to the last event window.
func (r *textReader) Read() (*Window, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.win.Reset(r.next)
	if r.hasPending {
		if r.pendingWin > r.next {
			return r.done()
		}
		r.hasPending = false
		if err := r.events(r.pending, r.pendingLine); err != nil {
			return r.fail(err)
		}
	}
	for !r.eof {
		line, err := r.readLine()
		if errors.Is(err, io.EOF) {
			r.eof = true
			break
		}
		if err != nil {
			return r.fail(err)
		}
		line = stripComment(line)
		if first, _ := token(line); len(first) == 0 {
			continue
		}
		w, rest, err := r.eventWindow(line)
		if err != nil {
			return r.fail(err)
		}
		if w > r.next {
			r.setPending(w, rest)
			return r.done()
		}
		if err := r.events(rest, r.line); err != nil {
			return r.fail(err)
		}
	}
	n := r.last + 1
	if r.headerLine[hdrWindows] > 0 {
		n = r.hdr.Windows
	}
	if r.next < n {
		return r.done()
	}
	r.err = io.EOF
	return nil, io.EOF
}

func (r *textReader) done() (*Window, error) {
	r.next++
	r.announced = len(r.pages)
	return &r.win, nil
}

// events applies the kind and pages of an event line of the current window.
func (r *textReader) events(rest []byte, line int) error {
	kindTok, rest := token(rest)
	if len(kindTok) == 0 {
		r.line = line
		return r.syntax("missing event kind after window %d: expected a, b or f", r.next)
	}
	var kind Kind
	var list *[]uint32
	switch {
	case len(kindTok) == 1 && kindTok[0] == 'a':
		kind, list = Access, &r.win.Accessed
	case len(kindTok) == 1 && kindTok[0] == 'b':
		kind, list = Birth, &r.win.Born
	case len(kindTok) == 1 && kindTok[0] == 'f':
		kind, list = Free, &r.win.Freed
	default:
		r.line = line
		return r.syntax("unknown event kind %s: expected a, b or f", truncate(kindTok))
	}
	gen := uint32(r.next) + 1
	for {
		var tok []byte
		tok, rest = token(rest)
		if len(tok) == 0 {
			return nil
		}
		p, msg := parsePage(tok)
		if msg != "" {
			r.line = line
			return r.syntax("bad page token %s: %s", truncate(tok), msg)
		}
		id, ok := r.ids.lookup(p)
		if !ok {
			if len(r.pages) >= math.MaxUint32 {
				r.line = line
				return r.syntax("more than %d distinct pages", uint64(math.MaxUint32))
			}
			id = uint32(len(r.pages))
			r.ids.insert(p, id)
			r.pages = append(r.pages, p)
			r.win.New = append(r.win.New, p)
			for k := range r.stamp {
				r.stamp[k] = append(r.stamp[k], 0)
			}
		}
		if st := r.stamp[kind]; st[id] != gen {
			st[id] = gen
			*list = append(*list, id)
		}
	}
}

const pageExpected = "expected a decimal or 0x-hex page number, or space/page"

// parsePage parses `page` or `space/page`. On error it returns a message
// saying what was expected.
func parsePage(tok []byte) (Page, string) {
	var p Page
	if i := bytes.IndexByte(tok, '/'); i >= 0 {
		s, ok, over := parseNum(tok[:i])
		if !ok {
			return p, pageExpected
		}
		if over || s > math.MaxUint32 {
			return p, "space number over 32 bits"
		}
		p.Space = uint32(s)
		tok = tok[i+1:]
	}
	v, ok, over := parseNum(tok)
	if !ok {
		return p, pageExpected
	}
	if over {
		return p, "page number over 64 bits"
	}
	p.Page = v
	return p, ""
}

// parseNum parses a decimal or 0x-hex unsigned number. ok reports whether b
// is well formed; over whether its value exceeds 64 bits.
func parseNum(b []byte) (v uint64, ok, over bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		for _, c := range b[2:] {
			var d byte
			switch {
			case c >= '0' && c <= '9':
				d = c - '0'
			case c|0x20 >= 'a' && c|0x20 <= 'f':
				d = c | 0x20 - 'a' + 10
			default:
				return 0, false, false
			}
			if v>>60 != 0 {
				over = true
			}
			v = v<<4 | uint64(d)
		}
		return v, true, over
	}
	return parseDec(b)
}

// parseDec parses a decimal unsigned number; see parseNum.
func parseDec(b []byte) (v uint64, ok, over bool) {
	if len(b) == 0 {
		return 0, false, false
	}
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false, false
		}
		if v > (math.MaxUint64-uint64(d))/10 {
			over = true
		}
		v = v*10 + uint64(d)
	}
	return v, true, over
}
