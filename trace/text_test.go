package trace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/internal/testutil"
	"mdk/trace"
)

const (
	textExamplePath = "../testdata/example.txt"
	textMaxLine     = 16 << 20 // the documented line length limit
)

func textRead(t *testing.T, text string) *trace.Trace {
	t.Helper()
	r, err := trace.NewTextReader(strings.NewReader(text), "trace.txt")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func textWrite(t *testing.T, tr *trace.Trace) string {
	t.Helper()
	return string(testutil.EncodeText(t, tr))
}

// textSameTrace compares traces, treating nil and empty slices alike.
func textSameTrace(t *testing.T, want, got *trace.Trace) {
	t.Helper()
	if reflect.DeepEqual(textNormalize(want), textNormalize(got)) {
		return // fast path; cmp is slow on thousands of traces
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", d)
	}
}

func TestTextExample(t *testing.T) {
	r, f, err := trace.Open(textExamplePath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantHdr := trace.Header{PageSize: 4096, Window: 30 * time.Second, Windows: 10}
	if d := cmp.Diff(wantHdr, r.Header()); d != "" {
		t.Errorf("header before the first Read (-want +got):\n%s", d)
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Windows) != 10 {
		t.Fatalf("W = %d, want 10", len(tr.Windows))
	}
	// Pages in order of first appearance: 1 2 3 (window 0, a), 4 (0, b),
	// 5 (1), 6 (3).
	wantPages := []trace.Page{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}}
	if d := cmp.Diff(wantPages, tr.Pages); d != "" {
		t.Errorf("pages (-want +got):\n%s", d)
	}
	// SPEC section 4.
	wantA := []int{3, 2, 2, 2, 1, 2, 1, 2, 1, 2}
	var gotA []int
	for _, w := range tr.Windows {
		gotA = append(gotA, len(w.Accessed))
	}
	if d := cmp.Diff(wantA, gotA); d != "" {
		t.Errorf("|A_w| (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]uint32{3}, tr.Windows[0].Born); d != "" {
		t.Errorf("window 0 born (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]uint32{4}, tr.Windows[4].Freed); d != "" {
		t.Errorf("window 4 freed (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]uint32{0, 5}, tr.Windows[9].Accessed); d != "" {
		t.Errorf("window 9 accessed (-want +got):\n%s", d)
	}

	// The writer gives back the file without its comment line.
	src, err := os.ReadFile(textExamplePath)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(string(src), "\n") {
		if !strings.HasPrefix(line, "#") {
			want.WriteString(line)
		}
	}
	if d := cmp.Diff(want.String(), textWrite(t, tr)); d != "" {
		t.Errorf("written example (-want +got):\n%s", d)
	}
}

func TestTextDefaults(t *testing.T) {
	tr := textRead(t, "mdk-trace 1 # version\r\n\n  # nothing\n2 a 7\n")
	if d := cmp.Diff(trace.Header{PageSize: 4096, Window: 30 * time.Second, Windows: 3}, tr.Header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	want := &trace.Trace{
		Header:  tr.Header,
		Pages:   []trace.Page{{0, 7}},
		Windows: []trace.Window{{Index: 0}, {Index: 1}, {Index: 2, New: []trace.Page{{0, 7}}, Accessed: []uint32{0}}},
	}
	textSameTrace(t, want, tr)

	tr = textRead(t, "mdk-trace 1\n")
	textSameTrace(t, &trace.Trace{Header: trace.DefaultHeader()}, tr)
}

func TestTextHeaders(t *testing.T) {
	tr := textRead(t, "mdk-trace 1\nsource  a job # on host x\nwindows 4\nwindow 1m30s\npage-size 2097152\n1 a 1\n")
	want := trace.Header{PageSize: 2 << 20, Window: 90 * time.Second, Windows: 4, Source: "a job"}
	if d := cmp.Diff(want, tr.Header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	tr = textRead(t, "mdk-trace 1\nsource \"job #3\\n\" # quoted\n")
	if tr.Header.Source != "job #3\n" {
		t.Errorf("quoted source = %q", tr.Header.Source)
	}
}

func TestTextPages(t *testing.T) {
	tr := textRead(t, "mdk-trace 1\n0 a 18446744073709551615 0xffffffffffffffff 0XaB 171 4294967295/0x0 0/5 5 7/5 7/0x5\n")
	want := []trace.Page{{0, 1<<64 - 1}, {0, 0xab}, {1<<32 - 1, 0}, {0, 5}, {7, 5}}
	if d := cmp.Diff(want, tr.Pages); d != "" {
		t.Errorf("pages (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]uint32{0, 1, 2, 3, 4}, tr.Windows[0].Accessed); d != "" {
		t.Errorf("accessed (-want +got):\n%s", d)
	}
}

func TestTextMergeDedup(t *testing.T) {
	tr := textRead(t, `mdk-trace 1
0 a 1 2 1
0 b 3 1
0 a 2 4 0x1 0/4
0 f 3
0 b 3
1 f 3 3
1 a 2
1 a 3/2
1 b 2
`)
	want := &trace.Trace{
		Header: trace.Header{PageSize: 4096, Window: 30 * time.Second, Windows: 2},
		Pages:  []trace.Page{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {3, 2}},
		Windows: []trace.Window{
			{Index: 0, New: []trace.Page{{0, 1}, {0, 2}, {0, 3}, {0, 4}}, Accessed: []uint32{0, 1, 3}, Born: []uint32{2, 0}, Freed: []uint32{2}},
			{Index: 1, New: []trace.Page{{3, 2}}, Accessed: []uint32{1, 4}, Born: []uint32{1}, Freed: []uint32{2}},
		},
	}
	textSameTrace(t, want, tr)
}

// textNormalize returns a copy of t with every nil slice made empty.
func textNormalize(t *trace.Trace) *trace.Trace {
	n := *t
	n.Pages = append([]trace.Page{}, t.Pages...)
	n.Windows = make([]trace.Window, len(t.Windows))
	for i, w := range t.Windows {
		n.Windows[i] = trace.Window{
			Index:    w.Index,
			New:      append([]trace.Page{}, w.New...),
			Accessed: append([]uint32{}, w.Accessed...),
			Born:     append([]uint32{}, w.Born...),
			Freed:    append([]uint32{}, w.Freed...),
		}
	}
	return &n
}

// textReadAllErr reads text to the end and returns the windows read and the first
// error (from trace.NewTextReader or Read), nil at a clean end.
func textReadAllErr(text string) ([]trace.Window, error) {
	r, err := trace.NewTextReader(strings.NewReader(text), "trace.txt")
	if err != nil {
		return nil, err
	}
	var ws []trace.Window
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			return ws, nil
		}
		if err != nil {
			return ws, err
		}
		ws = append(ws, w.Clone())
	}
}

// textErrorCases are malformed inputs and the exact error each gives.
const textV1 = "mdk-trace 1\n"
const textPageExp = "expected a decimal or 0x-hex page number, or space/page"
const textPosInt = "expected a positive decimal integer up to 2147483647"
const textDur = "expected a positive duration such as 30s, 1m or 500ms"

var textErrorCases = []struct {
	name, in, want string
}{
	{"empty file", "", `trace.txt:1: empty file: expected "mdk-trace 1" as the first line`},
	{"bad magic", "mdk-traces 1\n0 a 1\n", `trace.txt:1: not an mdk text trace: expected "mdk-trace 1" as the first line, got "mdk-traces 1"`},
	{"comment first", "# hello\nmdk-trace 1\n", `trace.txt:1: not an mdk text trace: expected "mdk-trace 1" as the first line, got "# hello"`},
	{"unsupported version", "mdk-trace 2\n", "trace.txt:1: unsupported text trace version 2 (this mdk reads 1)"},
	{"huge version", "mdk-trace 99999999999999999999\n", "trace.txt:1: unsupported text trace version 99999999999999999999 (this mdk reads 1)"},
	{"bad version", "mdk-trace textV1\n", `trace.txt:1: bad version "textV1": expected "mdk-trace 1" as the first line`},
	{"missing version", "mdk-trace\n", `trace.txt:1: missing version: expected "mdk-trace 1" as the first line`},
	{"extra after version", "mdk-trace 1 x\n", `trace.txt:1: unexpected "x" after the version: expected "mdk-trace 1" as the first line`},
	{"unknown header", textV1 + "page-size 4096\npagesize 4096\n", `trace.txt:3: unknown header "pagesize": expected page-size, window, windows, source or sample, or an event line "<window> <a|b|f> <page>..."`},
	{"duplicate header", textV1 + "windows 3\n# c\nwindows 4\n", `trace.txt:4: duplicate header "windows" (first on line 2)`},
	{"duplicate source", textV1 + "source a\nsource b\n", `trace.txt:3: duplicate header "source" (first on line 2)`},
	{"header after event", textV1 + "0 a 1\n\nwindow 30s\n", `trace.txt:4: header "window" after the first event line (line 2): headers must come before events`},
	{"header after event later", textV1 + "0 a 1\n3 a 1\nsource x\n", `trace.txt:4: header "source" after the first event line (line 2): headers must come before events`},
	{"window going back", textV1 + "3 a 1\n3 b 2\n2 a 1\n", "trace.txt:4: window 2 after window 3: event lines must not go back in window number"},
	{"unknown event kind", textV1 + "0 x 1\n", `trace.txt:2: unknown event kind "x": expected a, b or f`},
	{"long event kind", textV1 + "0 ab 1\n", `trace.txt:2: unknown event kind "ab": expected a, b or f`},
	{"missing kind", textV1 + "5\n", "trace.txt:2: missing event kind after window 5: expected a, b or f"},
	{"missing kind with comment", textV1 + "0 a 1\n5 # a 1\n", "trace.txt:3: missing event kind after window 5: expected a, b or f"},
	{"bad page token", textV1 + "page-size 4096\nwindow 30s\n\n# c\n0 a 1\n1 a 1 x1 2\n", `trace.txt:7: bad page token "x1": ` + textPageExp},
	{"bad page later window", textV1 + "0 a 1\n4 f 1/x\n", `trace.txt:3: bad page token "1/x": ` + textPageExp},
	{"empty space", textV1 + "0 a /1\n", `trace.txt:2: bad page token "/1": ` + textPageExp},
	{"empty page", textV1 + "0 a 1/\n", `trace.txt:2: bad page token "1/": ` + textPageExp},
	{"two slashes", textV1 + "0 a 1/2/3\n", `trace.txt:2: bad page token "1/2/3": ` + textPageExp},
	{"bare 0x", textV1 + "0 a 0x\n", `trace.txt:2: bad page token "0x": ` + textPageExp},
	{"bad hex", textV1 + "0 a 0x1g\n", `trace.txt:2: bad page token "0x1g": ` + textPageExp},
	{"signed page", textV1 + "0 a +1\n", `trace.txt:2: bad page token "+1": ` + textPageExp},
	{"negative page", textV1 + "0 a -1\n", `trace.txt:2: bad page token "-1": ` + textPageExp},
	{"page over 64 bits", textV1 + "0 a 18446744073709551616\n", `trace.txt:2: bad page token "18446744073709551616": page number over 64 bits`},
	{"hex page over 64 bits", textV1 + "0 a 2/0x10000000000000000\n", `trace.txt:2: bad page token "2/0x10000000000000000": page number over 64 bits`},
	{"space over 32 bits", textV1 + "0 a 4294967296/1\n", `trace.txt:2: bad page token "4294967296/1": space number over 32 bits`},
	{"hex space over 32 bits", textV1 + "0 a 0x100000000/1\n", `trace.txt:2: bad page token "0x100000000/1": space number over 32 bits`},
	{"windows smaller", textV1 + "windows 3\n2 a 1\n3 a 1\n", "trace.txt:4: event in window 3, but the windows header (line 2) says 3 windows (0..2)"},
	{"negative window", textV1 + "-1 a 1\n", `trace.txt:2: bad window number "-1": expected a non-negative decimal integer`},
	{"garbage window", textV1 + "0 a 1\nx a 1\n", `trace.txt:3: bad window number "x": expected a non-negative decimal integer`},
	{"hex window", textV1 + "0x1 a 1\n", `trace.txt:2: bad window number "0x1": expected a non-negative decimal integer`},
	{"window too large", textV1 + "2147483648 a 1\n", "trace.txt:2: window number 2147483648 too large: expected at most 2147483647"},
	{"letter window first", textV1 + "a 1 2\n", `trace.txt:2: unknown header "a": expected page-size, window, windows, source or sample, or an event line "<window> <a|b|f> <page>..."`},
	{"page-size zero", textV1 + "page-size 0\n", `trace.txt:2: bad page size "0": ` + textPosInt},
	{"page-size unit", textV1 + "page-size 4k\n", `trace.txt:2: bad page size "4k": ` + textPosInt},
	{"page-size negative", textV1 + "page-size -4096\n", `trace.txt:2: bad page size "-4096": ` + textPosInt},
	{"page-size missing", textV1 + "page-size # 4096\n", "trace.txt:2: missing value for page-size: " + textPosInt},
	{"page-size two values", textV1 + "page-size 4096 8192\n", `trace.txt:2: unexpected "8192" after the page size: page-size takes one value`},
	{"window no unit", textV1 + "window 30\n", `trace.txt:2: bad window length "30": ` + textDur},
	{"window zero", textV1 + "window 0s\n", `trace.txt:2: bad window length "0s": ` + textDur},
	{"window negative", textV1 + "window -1m\n", `trace.txt:2: bad window length "-1m": ` + textDur},
	{"windows zero", textV1 + "windows 0\n", `trace.txt:2: bad window count "0": ` + textPosInt},
	{"windows too large", textV1 + "windows 2147483648\n", `trace.txt:2: bad window count "2147483648": ` + textPosInt},
	{"source missing", textV1 + "source   # nothing\n", "trace.txt:2: missing value for source: expected a free-form description of the trace"},
	{"source bad quote", textV1 + "source \"abc\n", `trace.txt:2: bad quoted source "\"abc": expected a Go double-quoted string`},
	{"source after quote", textV1 + "source \"a\" b\n", `trace.txt:2: unexpected "b" after the quoted source`},
	{"long token cut", textV1 + "0 a " + strings.Repeat("z", 100), `trace.txt:2: bad page token "` + strings.Repeat("z", 64) + `"...: ` + textPageExp},
	{"long window cut", textV1 + strings.Repeat("9", 100) + " a 1", "trace.txt:2: window number " + strings.Repeat("9", 24) + "... too large: expected at most 2147483647"},
	{"line too long", textV1 + "0 a" + strings.Repeat(" 1", textMaxLine/2) + "\n", fmt.Sprintf("trace.txt:2: line longer than %d bytes", textMaxLine)},
}

func TestTextErrors(t *testing.T) {
	for _, tc := range textErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := textReadAllErr(tc.in)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err, tc.want)
			}
			var se *trace.SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("error %T is not a *SyntaxError", err)
			}
		})
	}
}

func TestTextLongLine(t *testing.T) {
	// A line longer than the read buffer, without a final line feed.
	var b strings.Builder
	b.WriteString("mdk-trace 1\n0 a")
	for i := range 100000 {
		fmt.Fprintf(&b, " %d", i)
	}
	tr := textRead(t, b.String())
	if len(tr.Pages) != 100000 || len(tr.Windows[0].Accessed) != 100000 {
		t.Errorf("got %d pages, %d accesses; want 100000", len(tr.Pages), len(tr.Windows[0].Accessed))
	}
}

// TestTextDamaged checks that every window before a damaged line is returned
// intact, and that the error then sticks.
func TestTextDamaged(t *testing.T) {
	const good = "mdk-trace 1\nwindows 12\n0 a 1 2\n0 b 3\n2 a 1 4\n2 f 2\n5 a 9/9 1\n"
	intact := textRead(t, good+"9 a 1\n")
	for _, bad := range []string{"9 a 1 zz\n", "9 q 1\n", "9 a 1\n8 a 1\n", "9 a 1\n12 a 1\n", "9 a 1\npage-size 1\n"} {
		ws, err := textReadAllErr(good + bad)
		if err == nil {
			t.Fatalf("%q: no error", bad)
		}
		if d := cmp.Diff(intact.Windows[:9], ws, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%q: windows before the damage (-want +got):\n%s", bad, d)
		}
		r, _ := trace.NewTextReader(strings.NewReader(good+bad), "trace.txt")
		for range 9 {
			r.Read()
		}
		_, err1 := r.Read()
		_, err2 := r.Read()
		if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
			t.Errorf("%q: errors %v then %v, want the same error twice", bad, err1, err2)
		}
		if got := len(r.Pages()); got != 5 {
			t.Errorf("%q: %d pages after the error, want the 5 of the intact windows", bad, got)
		}
	}
}

// textRandomTrace builds a random small trace with a Builder: spaces, repeated
// events, births and frees in any order, empty and trailing empty windows.
func textRandomTrace(rng *rand.Rand) *trace.Trace {
	h := trace.DefaultHeader()
	h.PageSize = 1 << (rng.IntN(20) + 1)
	h.Window = []time.Duration{time.Second, 30 * time.Second, 90 * time.Second, 1500 * time.Millisecond, 7 * time.Nanosecond}[rng.IntN(5)]
	sources := []string{"", "job 1", "job #2", " padded ", "\"quoted\"", "line\nbreak", "bad \xff utf8", "tab\there"}
	h.Source = sources[rng.IntN(len(sources))]
	w := rng.IntN(25)
	if rng.IntN(3) == 0 {
		h.Windows = w + rng.IntN(4)
	}
	npages := 1 + rng.IntN(40)
	pool := make([]trace.Page, npages)
	for i := range pool {
		switch rng.IntN(4) {
		case 0:
			pool[i] = trace.Page{uint32(rng.IntN(4)), rng.Uint64()}
		case 1:
			pool[i] = trace.Page{rng.Uint32(), uint64(rng.IntN(100))}
		default:
			pool[i] = trace.Page{0, uint64(rng.IntN(100))}
		}
	}
	b := trace.NewBuilder(h)
	for range rng.IntN(w*8 + 1) {
		n := rng.IntN(4)
		ps := make([]trace.Page, n)
		for i := range ps {
			ps[i] = pool[rng.IntN(npages)]
		}
		b.Add(rng.IntN(w+1), trace.Kind(rng.IntN(3)), ps...)
	}
	return b.Trace()
}

func TestTextRoundTrip(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 1))
	for i := range 2000 {
		tr := textRandomTrace(rng)
		text := textWrite(t, tr)
		got := textRead(t, text)
		textSameTrace(t, tr, got)
		if t.Failed() {
			t.Fatalf("trace %d, text:\n%s", i, text)
		}
		// And once more: text -> write -> read.
		if text2 := textWrite(t, got); text2 != text {
			t.Fatalf("trace %d: writing the read trace changed the text:\n%s\nthen\n%s", i, text, text2)
		}

		// Without a windows header, trailing empty windows are kept by an
		// event line without pages.
		noW := *tr
		noW.Header.Windows = 0
		got = textRead(t, textWrite(t, &noW))
		if len(got.Windows) != len(tr.Windows) {
			t.Fatalf("trace %d without windows header: read %d windows, wrote %d", i, len(got.Windows), len(tr.Windows))
		}
		got.Header.Windows = tr.Header.Windows
		textSameTrace(t, tr, got)
	}
}

func TestTextWriterOrder(t *testing.T) {
	// New pages first used by a birth, then an access, then a free: the
	// writer interleaves lines so that IDs are kept.
	b := trace.NewBuilder(trace.DefaultHeader())
	b.Add(0, trace.Birth, trace.Page{0, 4})
	b.Add(0, trace.Access, trace.Page{0, 1}, trace.Page{0, 4})
	b.Add(0, trace.Free, trace.Page{0, 9})
	b.Add(0, trace.Access, trace.Page{0, 2})
	b.Add(0, trace.Birth, trace.Page{0, 3})
	tr := b.Trace()
	text := textWrite(t, tr)
	want := "mdk-trace 1\npage-size 4096\nwindow 30s\nwindows 1\n0 b 4\n0 a 1 4\n0 f 9\n0 a 2\n0 b 3\n"
	if text != want {
		t.Errorf("text\n%s\nwant\n%s", text, want)
	}
	textSameTrace(t, tr, textRead(t, text))

	// A window whose New order no list order can give: written anyway, the
	// reader numbers the pages by first use.
	odd := &trace.Trace{
		Header:  trace.Header{PageSize: 4096, Window: time.Second, Windows: 1},
		Pages:   []trace.Page{{0, 10}, {0, 20}},
		Windows: []trace.Window{{Index: 0, New: []trace.Page{{0, 10}, {0, 20}}, Accessed: []uint32{1, 0}}},
	}
	got := textRead(t, textWrite(t, odd))
	if d := cmp.Diff([]trace.Page{{0, 20}, {0, 10}}, got.Pages); d != "" {
		t.Errorf("pages (-want +got):\n%s", d)
	}

	// Long lists are split.
	b = trace.NewBuilder(trace.DefaultHeader())
	for i := range 150 {
		b.Add(0, trace.Access, trace.Page{0, uint64(i)})
	}
	text = textWrite(t, b.Trace())
	if n := strings.Count(text, "\n0 a "); n != 3 {
		t.Errorf("150 pages written on %d lines, want 3:\n%s", n, text)
	}
}

func TestTextWriterErrors(t *testing.T) {
	h := trace.Header{PageSize: 4096, Window: time.Second}
	p := []trace.Page{{0, 1}, {0, 2}}
	tests := []struct {
		name    string
		h       trace.Header
		windows []trace.Window
		want    string
	}{
		{"page size", trace.Header{Window: time.Second}, nil, "trace: text writer: page size 0 out of range 1..2147483647"},
		{"window length", trace.Header{PageSize: 1}, nil, "trace: text writer: window length 0s is not positive"},
		{"window count", trace.Header{PageSize: 1, Window: 1, Windows: -1}, nil, "trace: text writer: window count -1 out of range 0..2147483647"},
		{"index", h, []trace.Window{{Index: 1}}, "trace: text writer: window 0: got window index 1, want 0"},
		{"beyond header", trace.Header{PageSize: 1, Window: 1, Windows: 1}, []trace.Window{{Index: 0}, {Index: 1}}, "trace: text writer: window 1: beyond the 1 windows of the header"},
		{"unknown id", h, []trace.Window{{Index: 0, New: p[:1], Accessed: []uint32{0}, Freed: []uint32{1}}}, "trace: text writer: window 0: f list has page ID 1, but only 1 pages were announced"},
		{"repeated id", h, []trace.Window{{Index: 0, New: p[:1], Born: []uint32{0, 0}}}, "trace: text writer: window 0: b list has page 1 twice"},
		{"announced twice", h, []trace.Window{{Index: 0, New: p[:1], Accessed: []uint32{0}}, {Index: 1, New: p[:1]}}, "trace: text writer: window 1: page 1 announced twice"},
		{"unused new page", h, []trace.Window{{Index: 0, New: p, Accessed: []uint32{1}}}, "trace: text writer: window 0: page 1 is announced but has no event in the window, which the text format cannot express"},
		{"too few windows", trace.Header{PageSize: 1, Window: 1, Windows: 3}, []trace.Window{{Index: 0}}, "trace: text writer: closed after 1 windows, but the header says 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := trace.NewTextWriter(&buf, tc.h)
			for i := 0; err == nil && i < len(tc.windows); i++ {
				err = w.WriteWindow(&tc.windows[i])
			}
			if err == nil {
				err = w.Close()
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error\n got %v\nwant %s", err, tc.want)
			}
			if w != nil && len(tc.windows) > 0 && w.WriteWindow(&trace.Window{Index: 5}) == nil {
				t.Error("writer accepted a window after an error")
			}
		})
	}
}

// TestTextReadAllocs pins the hot path: once its pages are known, reading a
// window allocates nothing.
func TestTextReadAllocs(t *testing.T) {
	var b strings.Builder
	b.WriteString("mdk-trace 1\n")
	for w := range 300 {
		fmt.Fprintf(&b, "%d a", w)
		for p := range 100 {
			fmt.Fprintf(&b, " %d 3/%d", p, p)
		}
		fmt.Fprintf(&b, "\n%d b 1 2\n%d f 0x3\n", w, w)
	}
	r, err := trace.NewTextReader(strings.NewReader(b.String()), "t.txt")
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(200, func() {
		if w, err := r.Read(); err != nil || len(w.Accessed) != 200 {
			t.Fatalf("read: %v", err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per window, want 0", allocs)
	}
}

func TestFormatRegistered(t *testing.T) {
	f, err := trace.FormatForPath("x.txt")
	if err != nil || f.Name != "text" {
		t.Fatalf("FormatForPath(x.txt) = %v, %v", f, err)
	}
	if trace.Formats()[0] != f {
		t.Error("text is not the first (default output) format")
	}
	r, err := trace.NewReaderAuto(strings.NewReader("mdk-trace 1\n0 a 1\n"), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
}

func TestTextFeatures(t *testing.T) {
	r, f, err := trace.Open("testdata/text-features.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	b := trace.NewBuilder(trace.Header{PageSize: 2 << 20, Window: 500 * time.Millisecond, Windows: 8, Source: "job #7 on host\tx"})
	b.Add(0, trace.Access, trace.Page{Space: 0, Page: 16}, trace.Page{Space: 3, Page: 16})
	b.Add(0, trace.Birth, trace.Page{Space: 1<<32 - 1, Page: 1<<64 - 1})
	b.Add(0, trace.Access, trace.Page{Space: 0, Page: 17})
	b.Add(2, trace.Birth, trace.Page{Space: 0, Page: 17})
	b.Add(2, trace.Free, trace.Page{Space: 0, Page: 17}, trace.Page{Space: 0, Page: 16})
	b.Add(6, trace.Access, trace.Page{Space: 0, Page: 16})
	textSameTrace(t, b.Trace(), got)
	if len(got.Windows[0].Accessed) != 3 {
		t.Errorf("window 0 accesses %v, want 3 distinct pages", got.Windows[0].Accessed)
	}
}

// The trace of the NewTextReader doc comment.
func ExampleNewTextReader() {
	const text = `mdk-trace 1          # first line, required
page-size 4096       # optional headers, before the first event line
window 30s
windows 10           # optional; default: last window + 1
source my job on host x
0 a 1 2 3            # <window> <a|b|f> <page>...
0 b 4
1 a 1 7/0x1f
4 f 5
`
	r, err := trace.NewTextReader(strings.NewReader(text), "example.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", r.Header())
	for {
		w, err := r.Read()
		if err != nil {
			fmt.Println(err)
			break
		}
		if w.Records() > 0 {
			fmt.Printf("window %d: new %v accessed %v born %v freed %v\n", w.Index, w.New, w.Accessed, w.Born, w.Freed)
		}
	}
	fmt.Println("pages", r.Pages())
	// Output:
	// {PageSize:4096 Window:30s Windows:10 Source:my job on host x Sample:100%}
	// window 0: new [1 2 3 4] accessed [0 1 2] born [3] freed []
	// window 1: new [7/31] accessed [0 4] born [] freed []
	// window 4: new [5] accessed [] born [] freed [5]
	// EOF
	// pages [1 2 3 4 7/31 5]
}

// TestTextWriterFlush checks that Flush puts every completed window in the
// underlying writer before Close.
func TestTextWriterFlush(t *testing.T) {
	var buf bytes.Buffer
	w, err := trace.NewTextWriter(&buf, trace.DefaultHeader())
	if err != nil {
		t.Fatal(err)
	}
	win := trace.Window{Index: 0, New: []trace.Page{{Page: 7}}, Accessed: []uint32{0}}
	if err := w.WriteWindow(&win); err != nil {
		t.Fatal(err)
	}
	if err := w.(interface{ Flush() error }).Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewTextReader(bytes.NewReader(buf.Bytes()), "flushed")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(r)
	if err != nil || len(tr.Windows) != 1 || len(tr.Pages) != 1 || tr.Pages[0].Page != 7 {
		t.Fatalf("after Flush: %+v, %v", tr, err)
	}
}
