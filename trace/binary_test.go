package trace_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/trace"
)

// binEvents is a trace's content independent of dense-ID numbering: per
// window, per kind, the sorted pages.
type binEvents struct {
	Header  trace.Header
	Windows [][3][]trace.Page
}

func binCanon(t *trace.Trace) binEvents {
	ev := binEvents{Header: t.Header}
	for _, w := range t.Windows {
		var k [3][]trace.Page
		for i, ids := range [3][]uint32{w.Accessed, w.Born, w.Freed} {
			for _, id := range ids {
				k[i] = append(k[i], t.Pages[id])
			}
			slices.SortFunc(k[i], func(a, b trace.Page) int {
				if a.Space != b.Space {
					return int(a.Space) - int(b.Space)
				}
				if a.Page < b.Page {
					return -1
				} else if a.Page > b.Page {
					return 1
				}
				return 0
			})
		}
		ev.Windows = append(ev.Windows, k)
	}
	return ev
}

// binRandom returns a random trace: pages in a few spaces with small and
// huge page numbers, every kind, empty windows, trailing empty windows, and
// events added in random order (so the input is not canonical).
func binRandom(rng *rand.Rand) *trace.Trace {
	h := trace.Header{
		PageSize: 1 << rng.IntN(22),
		Window:   time.Duration(1+rng.IntN(100)) * time.Second,
		Source:   fmt.Sprintf("random trace %d", rng.IntN(1000)),
	}
	nw := rng.IntN(12)
	if rng.IntN(2) == 0 {
		h.Windows = nw + rng.IntN(3)
	}
	b := trace.NewBuilder(h)
	var pool []trace.Page
	for range 1 + rng.IntN(200) {
		p := trace.Page{Space: uint32(rng.IntN(3)), Page: uint64(rng.IntN(1000))}
		switch rng.IntN(10) {
		case 0:
			p.Page = rng.Uint64()
		case 1:
			p.Space = rng.Uint32()
		}
		pool = append(pool, p)
	}
	for w := range nw {
		if rng.IntN(5) == 0 {
			continue
		}
		for range rng.IntN(3 * len(pool)) {
			b.Add(w, trace.Kind(rng.IntN(3)), pool[rng.IntN(len(pool))])
		}
	}
	return b.Trace()
}

func binRead(t testing.TB, data []byte) *trace.Trace {
	t.Helper()
	r, err := trace.NewReaderAuto(bytes.NewReader(data), "test.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// binCheckCanonical checks the reader guarantees of trace.Window plus the
// canonical order of docs/trace-format.md.
func binCheckCanonical(t *testing.T, tr *trace.Trace) {
	t.Helper()
	n := 0
	for i, w := range tr.Windows {
		if w.Index != i {
			t.Fatalf("window %d has index %d", i, w.Index)
		}
		for k := 1; k < len(w.New); k++ {
			a, b := w.New[k-1], w.New[k]
			if a.Space > b.Space || a.Space == b.Space && a.Page >= b.Page {
				t.Fatalf("window %d: new pages not in (space, page) order: %v", i, w.New)
			}
		}
		n += len(w.New)
		for _, l := range [][]uint32{w.Accessed, w.Born, w.Freed} {
			if !slices.IsSorted(l) || len(slices.Compact(slices.Clone(l))) != len(l) {
				t.Fatalf("window %d: list not strictly increasing: %v", i, l)
			}
			if len(l) > 0 && int(l[len(l)-1]) >= n {
				t.Fatalf("window %d: ID %d not announced", i, l[len(l)-1])
			}
		}
	}
}

func TestBinaryRoundTripRandom(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 1))
	for i := range 300 {
		tr := binRandom(rng)
		data := testutil.EncodeBinary(t, tr)
		got := binRead(t, data)
		binCheckCanonical(t, got)
		if d := cmp.Diff(binCanon(tr), binCanon(got)); d != "" {
			t.Fatalf("trace %d: binary round trip changed the events (-want +got):\n%s", i, d)
		}
		// The file is canonical: writing what was read gives the same bytes.
		if again := testutil.EncodeBinary(t, got); !bytes.Equal(data, again) {
			t.Fatalf("trace %d: binary -> read -> binary is not byte-identical", i)
		}
	}
}

func TestBinaryTextRoundTrip(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 2))
	for i := range 100 {
		tr := binRandom(rng)
		bin := testutil.EncodeBinary(t, tr)
		// binary -> text -> binary is byte-identical.
		var txt bytes.Buffer
		tw, err := trace.NewTextWriter(&txt, tr.Header)
		if err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewBinaryReader(bytes.NewReader(bin), "in.mdkt")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := trace.Copy(tw, r); err != nil {
			t.Fatal(err)
		}
		tr2, err := trace.ReadAll(mustText(t, txt.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if again := testutil.EncodeBinary(t, tr2); !bytes.Equal(bin, again) {
			t.Fatalf("trace %d: binary -> text -> binary is not byte-identical\ntext:\n%s", i, txt.String())
		}
		// text -> binary -> text gives the same events.
		if d := cmp.Diff(binCanon(tr2), binCanon(binRead(t, testutil.EncodeBinary(t, tr2)))); d != "" {
			t.Fatalf("trace %d: text -> binary -> text changed the events (-want +got):\n%s", i, d)
		}
	}
}

func mustText(t *testing.T, b []byte) trace.Reader {
	t.Helper()
	r, err := trace.NewTextReader(bytes.NewReader(b), "test.txt")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// binExample is the worked example of SPEC section 4, plus a window with
// pages in other spaces and huge page numbers.
const binExample = `mdk-trace 1
page-size 4096
window 30s
windows 10
0 a 1 2 3
0 b 4
1 a 1 5
2 a 1 2
3 a 1 6
4 a 1
4 f 5
5 a 1 3
6 a 1
7 a 1 2
8 a 1
9 a 1 6
`

const binSpaces = `mdk-trace 1
page-size 65536
window 1m
source golden test: spaces and large pages
0 b 2/0xffffffffffffffff 0 1/7
1 a 0 1/7 3/5
2 f 2/0xffffffffffffffff
4 a 4294967295/1
`

func TestBinaryGolden(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"example.mdkt", binExample},
		{"spaces.mdkt", binSpaces},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := trace.ReadAll(mustText(t, []byte(tc.text)))
			if err != nil {
				t.Fatal(err)
			}
			data := testutil.EncodeBinary(t, tr)
			testutil.Golden(t, tc.name, data)
			// The golden file reads back as the text trace.
			golden, err := os.ReadFile("testdata/" + tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(binCanon(tr), binCanon(binRead(t, golden))); d != "" {
				t.Fatalf("golden file does not read as the text (-want +got):\n%s", d)
			}
		})
	}
}

// TestBinaryLayout checks the first bytes against docs/trace-format.md by
// hand, independently of the writer.
func TestBinaryLayout(t *testing.T) {
	h := trace.Header{PageSize: 4096, Window: 30 * time.Second, Windows: 1, Source: "x"}
	b := trace.NewBuilder(h)
	b.Add(0, trace.Access, trace.Page{Page: 5})
	data := testutil.EncodeBinary(t, b.Trace())
	want := []byte("\x89MDKT\r\n\x1a")
	want = append(want, 1, 0, 0, 0) // version
	fields := []byte{0x80, 0x20}    // 4096
	// 30e9 ns as uvarint.
	v := uint64(30 * time.Second)
	for v >= 0x80 {
		fields = append(fields, byte(v)|0x80)
		v >>= 7
	}
	fields = append(fields, byte(v), 1, 1, 'x')
	want = append(want, byte(len(fields)), 0, 0, 0)
	want = append(want, fields...)
	if !bytes.HasPrefix(data, want) {
		t.Fatalf("file starts with\n% x\nwant\n% x", data[:len(want)], want)
	}
	rest := data[len(want)+4:] // after the header CRC
	if rest[0] != 'W' || !bytes.Equal(rest[1:5], []byte{0, 0, 0, 0}) {
		t.Fatalf("first block starts with % x", rest[:5])
	}
	// Payload: 1 new page (space 0, page 5), a list [0], empty b and f lists.
	if u := rest[5]; u != 7 {
		t.Fatalf("raw payload length %d, want 7", u)
	}
	end := data[len(data)-9:]
	if end[0] != 'E' || !bytes.Equal(end[1:5], []byte{1, 0, 0, 0}) {
		t.Fatalf("end block % x", end)
	}
}

// binReadPrefix reads data until the first error and returns the windows
// read and the error (nil at a clean end).
func binReadPrefix(data []byte) (*trace.Trace, error) {
	r, err := trace.NewBinaryReader(bytes.NewReader(data), "damaged.mdkt")
	if err != nil {
		return &trace.Trace{}, err
	}
	return trace.ReadAll(r)
}

func TestBinaryTruncated(t *testing.T) {
	tr, err := trace.ReadAll(mustText(t, []byte(binExample)))
	if err != nil {
		t.Fatal(err)
	}
	data := testutil.EncodeBinary(t, tr)
	full := binCanon(binRead(t, data))
	// Offsets where each window's block ends, from the file itself.
	var ends []int
	for n := 1; n < len(data); n++ {
		if got, err := binReadPrefix(data[:n]); err != nil && len(got.Windows) > len(ends) {
			ends = append(ends, n-1)
		}
	}
	for n := 0; n < len(data); n++ {
		got, err := binReadPrefix(data[:n])
		var ce *trace.CorruptError
		if !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("truncated at %d: error %v, want a *CorruptError wrapping io.ErrUnexpectedEOF", n, err)
		}
		if ce.LastWindow != len(got.Windows)-1 {
			t.Fatalf("truncated at %d: LastWindow %d, but %d windows were read", n, ce.LastWindow, len(got.Windows))
		}
		if ce.Offset > int64(n) || !strings.Contains(err.Error(), fmt.Sprintf("byte offset %d", ce.Offset)) {
			t.Fatalf("truncated at %d: bad offset in %v", n, err)
		}
		// Every window whose block is complete is read.
		complete := 0
		for _, e := range ends {
			if e < n {
				complete++
			}
		}
		if len(got.Windows) != complete {
			t.Fatalf("truncated at %d: read %d windows, %d blocks are complete", n, len(got.Windows), complete)
		}
		if d := cmp.Diff(full.Windows[:complete], binCanon(got).Windows); complete > 0 && d != "" {
			t.Fatalf("truncated at %d: prefix differs (-want +got):\n%s", n, d)
		}
	}
	if len(ends) != len(tr.Windows) {
		t.Fatalf("found %d block ends, want %d", len(ends), len(tr.Windows))
	}
}

func TestBinaryBitFlips(t *testing.T) {
	tr, err := trace.ReadAll(mustText(t, []byte(binSpaces)))
	if err != nil {
		t.Fatal(err)
	}
	data := testutil.EncodeBinary(t, tr)
	full := binCanon(binRead(t, data))
	for i := range data {
		for bit := range 8 {
			bad := slices.Clone(data)
			bad[i] ^= 1 << bit
			got, err := binReadPrefix(bad)
			var ce *trace.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("flip byte %d bit %d: error %v, want a *CorruptError", i, bit, err)
			}
			if n := len(got.Windows); n > 0 {
				if d := cmp.Diff(full.Windows[:n], binCanon(got).Windows); d != "" {
					t.Fatalf("flip byte %d bit %d: windows before the damage differ (-want +got):\n%s", i, bit, d)
				}
			}
		}
	}
}

func TestBinaryHeaderErrors(t *testing.T) {
	good := testutil.EncodeBinary(t, binRead(t, testutil.EncodeBinary(t, trace.NewBuilder(trace.DefaultHeader()).Trace())))
	v6 := slices.Clone(good)
	v6[8] = 6
	for _, tc := range []struct {
		name string
		data []byte
		is   error
		msg  string
	}{
		{"empty", nil, io.ErrUnexpectedEOF, "byte offset 0: truncated magic"},
		{"foreign", []byte("hello, world\n"), nil, "byte offset 0: not an mdk binary trace"},
		{"text", []byte("mdk-trace 1\n"), nil, "not an mdk binary trace"},
		{"version 6", v6, trace.ErrVersion, "byte offset 8: unsupported binary format version 6 (this mdk reads versions 1 to 5)"},
		{"header length", append([]byte("\x89MDKT\r\n\x1a\x01\x00\x00\x00"), 0xff, 0xff, 0xff, 0x7f), nil, "header length 2147483647 exceeds"},
		{"short header", good[:14], io.ErrUnexpectedEOF, "truncated header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trace.NewBinaryReader(bytes.NewReader(tc.data), "x.mdkt")
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "x.mdkt: ") {
				t.Fatalf("error %v, want one starting with the file name and containing %q", err, tc.msg)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("error %v does not wrap %v", err, tc.is)
			}
		})
	}
}

func TestBinaryWriterErrors(t *testing.T) {
	p := func(n uint64) trace.Page { return trace.Page{Page: n} }
	for _, tc := range []struct {
		name string
		h    trace.Header
		wins []trace.Window
		msg  string
	}{
		{"index", trace.DefaultHeader(), []trace.Window{{Index: 1}}, "got window index 1, want 0"},
		{"unannounced", trace.DefaultHeader(), []trace.Window{{New: []trace.Page{p(1)}, Accessed: []uint32{0, 1}}}, "a list has page ID 1, but only 1 pages were announced"},
		{"twice", trace.DefaultHeader(), []trace.Window{{New: []trace.Page{p(1), p(2)}, Born: []uint32{1, 0, 1}}}, "b list has page 2 twice"},
		{"new twice", trace.DefaultHeader(), []trace.Window{{New: []trace.Page{p(2), p(1), p(2)}}}, "page 2 announced twice"},
		{"too many", trace.Header{PageSize: 1, Window: time.Second, Windows: 1}, []trace.Window{{Index: 0}, {Index: 1}}, "beyond the 1 windows of the header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := trace.NewBinaryWriter(io.Discard, tc.h)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.wins {
				if err = w.WriteWindow(&tc.wins[i]); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want %q", err, tc.msg)
			}
		})
	}
	w, err := trace.NewBinaryWriter(io.Discard, trace.Header{PageSize: 1, Window: time.Second, Windows: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "closed after 0 windows, but the header says 2") {
		t.Fatalf("Close: %v", err)
	}
}

// TestBinaryReadAllocs pins the steady state of Read: no allocation per
// window once the buffers have grown.
func TestBinaryReadAllocs(t *testing.T) {
	if binRace {
		t.Skip("allocation counts differ under the race detector")
	}
	rng := testutil.Rand(testutil.Seed(t, 3))
	b := trace.NewBuilder(trace.DefaultHeader())
	const windows = 400
	for w := range windows {
		for range 500 {
			b.Add(w, trace.Access, trace.Page{Page: uint64(rng.IntN(1000))})
		}
	}
	data := testutil.EncodeBinary(t, b.Trace())
	r, err := trace.NewBinaryReader(bytes.NewReader(data), "x.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per window read, want 0", allocs)
	}
}

// TestBinaryForgedLength: a block claiming the largest allowed payload in a
// file that ends soon after costs little memory, and reads as truncated.
func TestBinaryForgedLength(t *testing.T) {
	good := testutil.EncodeBinary(t, trace.NewBuilder(trace.DefaultHeader()).Trace())
	blk := len(good) - 9 // where the end block starts
	forged := append(slices.Clone(good[:blk]), 'W', 0, 0, 0, 0)
	forged = append(forged, 0, 0, 0, 0x10, 0, 0, 0, 0x10) // U = C = 2^28
	forged = append(forged, make([]byte, 4+100)...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := binReadPrefix(forged)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), fmt.Sprintf("byte offset %d: truncated window 0 block payload", blk)) {
		t.Fatalf("error %v, want truncation of window 0's block at offset %d", err, blk)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Fatalf("reading a %d-byte file allocated %d bytes", len(forged), n)
	}
}

// TestBinaryDiscardPages checks that a reader told to discard its page table
// still yields the same windows and stops growing Pages.
func TestBinaryDiscardPages(t *testing.T) {
	f, err := os.Open("testdata/spaces.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := trace.NewBinaryReader(bytes.NewReader(b), "a")
	if err != nil {
		t.Fatal(err)
	}
	want, err := trace.ReadAll(r1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := trace.NewBinaryReader(bytes.NewReader(b), "b")
	if err != nil {
		t.Fatal(err)
	}
	r2.(trace.PageDiscarder).DiscardPages()
	got, err := trace.ReadAll(r2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) != 0 || len(got.Windows) != len(want.Windows) {
		t.Fatalf("discarding reader: %d pages, %d windows; want 0 and %d", len(got.Pages), len(got.Windows), len(want.Windows))
	}
	for w := range want.Windows {
		if !slices.Equal(got.Windows[w].Accessed, want.Windows[w].Accessed) || !slices.Equal(got.Windows[w].New, want.Windows[w].New) {
			t.Fatalf("window %d differs", w)
		}
	}
}

// TestBinaryCountNew checks that a reader told to count new pages yields the
// same windows with the new pages counted in Unlisted instead of listed, and
// keeps no page table. FuzzBinaryReader checks that it finds the same damage.
func TestBinaryCountNew(t *testing.T) {
	b, err := os.ReadFile("testdata/spaces.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	r1, err := trace.NewBinaryReader(bytes.NewReader(b), "a")
	if err != nil {
		t.Fatal(err)
	}
	want, err := trace.ReadAll(r1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := trace.NewBinaryReader(bytes.NewReader(b), "b")
	if err != nil {
		t.Fatal(err)
	}
	r2.(trace.NewCounter).CountNew()
	news := 0
	for w := 0; ; w++ {
		got, err := r2.Read()
		if errors.Is(err, io.EOF) {
			if w != len(want.Windows) {
				t.Fatalf("counting reader: %d windows, want %d", w, len(want.Windows))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		ww := &want.Windows[w]
		if len(got.New) != 0 || got.Unlisted != len(ww.New) || got.NumNew() != ww.NumNew() {
			t.Fatalf("window %d: %d listed, %d unlisted new pages; want 0 and %d", w, len(got.New), got.Unlisted, len(ww.New))
		}
		if !slices.Equal(got.Accessed, ww.Accessed) || !slices.Equal(got.Born, ww.Born) || !slices.Equal(got.Freed, ww.Freed) {
			t.Fatalf("window %d differs", w)
		}
		news += got.Unlisted
	}
	if news == 0 || len(r2.Pages()) != 0 {
		t.Fatalf("counted %d new pages and kept %d; want some and none", news, len(r2.Pages()))
	}

}
