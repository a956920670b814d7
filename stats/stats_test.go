package stats

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/trace"
)

func pages(ps ...uint64) []trace.Page {
	var out []trace.Page
	for _, p := range ps {
		out = append(out, trace.Page{Page: p})
	}
	return out
}

// example builds SPEC section 4's example.txt by hand.
func example() *trace.Trace {
	b := trace.NewBuilder(trace.Header{PageSize: 4096, Window: 30 * time.Second, Windows: 10})
	b.Add(0, trace.Access, pages(1, 2, 3)...)
	b.Add(0, trace.Birth, pages(4)...)
	b.Add(1, trace.Access, pages(1, 5)...)
	b.Add(2, trace.Access, pages(1, 2)...)
	b.Add(3, trace.Access, pages(1, 6)...)
	b.Add(4, trace.Access, pages(1)...)
	b.Add(4, trace.Free, pages(5)...)
	b.Add(5, trace.Access, pages(1, 3)...)
	b.Add(6, trace.Access, pages(1)...)
	b.Add(7, trace.Access, pages(1, 2)...)
	b.Add(8, trace.Access, pages(1)...)
	b.Add(9, trace.Access, pages(1, 6)...)
	return b.Trace()
}

// hist builds histogram buckets 0, 1, 2, 3-4, 5-8, ... with these counts.
func hist(counts ...int64) []Bucket {
	ranges := [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 4}, {5, 8}, {9, 16}, {17, 32}, {33, 64}}
	out := []Bucket{}
	for i, c := range counts {
		out = append(out, Bucket{Min: ranges[i][0], Max: ranges[i][1], Count: c})
	}
	return out
}

// exampleStats are the numbers of example.txt, computed by hand:
//
//	pages 1..6, all in space 0.
//	lives: one per page (page 5 is freed at the end of 4 and never seen
//	  again): 6. births: page 4's b in window 0: 1. frees: page 5's: 1.
//	|A_w| = 3 2 2 2 1 2 1 2 1 2 (SPEC section 4): Σ = 18; sorted
//	  1 1 1 2 2 2 2 2 2 3, lower median at index (10-1)/2 = 4: 2.
//	L: pages 1-4 alive in all 10 windows (40), page 5 in 1..4 (4), page 6
//	  in 3..9 (7): 51, as SPEC section 4 says.
//	alive per window: w0 4 (1-4), w1 5 (+5), w2 5, w3 6 (+6), w4 6 (5 is
//	  freed at its end), w5..9 5: peak 6.
//	touches and gaps (e = 10 except page 5, e = 5):
//	  page 1: touches 0..9: 9 closed gaps g=0; open g = 10-9-1 = 0.
//	  page 2: touches 0 2 7: closed g=1, g=4; open g = 10-7-1 = 2.
//	  page 3: touches 0 5: closed g=4; open g = 10-5-1 = 4.
//	  page 4: touch 0 (birth): open g = 10-0-1 = 9.
//	  page 5: touch 1, e = 5: open g = 5-1-1 = 3.
//	  page 6: touches 3 9: closed g=5; open g = 0.
//	closed: 0 x9, 1, 4, 4, 5: 13 -> buckets 0:9 1:1 2:0 3-4:2 5-8:1 9-16:0.
//	open: 0, 2, 4, 9, 3, 0: 6 -> buckets 0:2 1:0 2:1 3-4:2 5-8:0 9-16:1.
//	checks: closed + lives = 19 = accesses + births; Σ(g+1) over all gaps =
//	  (9+2+5+5+6) + (1+3+5+10+4+1) = 27 + 24 = 51 = L.
var exampleStats = &Stats{
	Windows: 10, Window: "30s", WindowSeconds: 30, PageSize: 4096,
	Spaces: 1, Pages: 6, Lives: 6, AccessRecords: 18, Births: 1, Frees: 1,
	AccessedMin: 1, AccessedMedian: 2, AccessedMax: 3,
	AlivePageWindows: 51, PeakAlivePages: 6,
	ClosedGaps: 13, OpenGaps: 6,
	ClosedGapHist: hist(9, 1, 0, 2, 1, 0),
	OpenGapHist:   hist(2, 0, 1, 2, 0, 1),
}

func TestExample(t *testing.T) {
	got, err := Compute(example().NewReader())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(exampleStats, got); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}

// TestExampleFile reads the repository's example.txt with the text reader.
func TestExampleFile(t *testing.T) {
	r, c, err := trace.Open("../testdata/example.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := Compute(r)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(exampleStats, got); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := exampleStats.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := `windows              10 x 30s
page size            4096 bytes
spaces               1
pages                6
lives                6
access records       18
births               1
frees                1
ignored births       0
ignored frees        0
accessed per window  min 1, median 2, max 3
alive page-windows   51
peak alive pages     6
closed gaps          13
open gaps            6

gap length  closed  open
0                9     2
1                1     0
2                0     1
3-4              2     2
5-8              1     0
9-16             0     1
`
	if d := cmp.Diff(want, buf.String()); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}

func TestJSONKeys(t *testing.T) {
	b, err := json.Marshal(exampleStats)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{
		"access_records", "accessed_max", "accessed_median", "accessed_min", "alive_page_windows",
		"births", "closed_gap_histogram", "closed_gaps", "frees", "ignored_births", "ignored_frees",
		"lives", "open_gap_histogram", "open_gaps", "page_size", "pages", "peak_alive_pages",
		"spaces", "window", "window_seconds", "windows",
	}
	if d := cmp.Diff(want, keys); d != "" {
		t.Errorf("JSON keys changed (-want +got):\n%s", d)
	}
	// An empty trace has empty histograms, not null.
	s, err := Compute((&trace.Trace{Header: trace.DefaultHeader()}).NewReader())
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(s)
	if !bytes.Contains(b, []byte(`"closed_gap_histogram":[],"open_gap_histogram":[]`)) {
		t.Errorf("empty trace JSON: %s", b)
	}
}

type event struct {
	w    int
	kind trace.Kind
	p    []trace.Page
}

func build(windows int, evs ...event) *trace.Trace {
	b := trace.NewBuilder(trace.Header{PageSize: 4096, Window: time.Second, Windows: windows})
	for _, e := range evs {
		b.Add(e.w, e.kind, e.p...)
	}
	return b.Trace()
}

func TestEdgeCases(t *testing.T) {
	a, bb, f := trace.Access, trace.Birth, trace.Free
	p1 := pages(1)
	tests := []struct {
		name string
		tr   *trace.Trace
		want Stats // Window, WindowSeconds and PageSize are filled in
	}{
		{
			// Page 1 accessed in 0, born again in 2 while alive: ignored.
			// One life 0..2 (L 3), open gap 3-0-1 = 2.
			name: "ignored birth",
			tr:   build(3, event{0, a, p1}, event{2, bb, p1}),
			want: Stats{Windows: 3, Spaces: 1, Pages: 1, Lives: 1, AccessRecords: 1, IgnoredBirths: 1,
				AccessedMin: 0, AccessedMedian: 0, AccessedMax: 1, AlivePageWindows: 3, PeakAlivePages: 1,
				OpenGaps: 1, ClosedGapHist: hist(0, 0, 0), OpenGapHist: hist(0, 0, 1)},
		},
		{
			// a and b in window 0: the access wins, the life is not a
			// birth and the b is not counted as ignored. The b in 1 is
			// ignored (alive). Open gap 2-0-1 = 1.
			name: "a wins over b",
			tr:   build(2, event{0, a, p1}, event{0, bb, p1}, event{1, bb, p1}),
			want: Stats{Windows: 2, Spaces: 1, Pages: 1, Lives: 1, AccessRecords: 1, IgnoredBirths: 1,
				AccessedMin: 0, AccessedMedian: 0, AccessedMax: 1, AlivePageWindows: 2, PeakAlivePages: 1,
				OpenGaps: 1, ClosedGapHist: hist(0, 0), OpenGapHist: hist(0, 1)},
		},
		{
			// a and f in window 0: the life is window 0 only (e = 1, open
			// gap 0). The access in 1 starts a second life, to the end
			// (e = 2, open gap 0). L = 1 + 1.
			name: "f after a in the same window",
			tr:   build(2, event{0, a, p1}, event{0, f, p1}, event{1, a, p1}),
			want: Stats{Windows: 2, Spaces: 1, Pages: 1, Lives: 2, AccessRecords: 2, Frees: 1,
				AccessedMin: 1, AccessedMedian: 1, AccessedMax: 1, AlivePageWindows: 2, PeakAlivePages: 1,
				OpenGaps: 2, ClosedGapHist: hist(0), OpenGapHist: hist(2)},
		},
		{
			// f of a page never alive (0): ignored. b and f in 1: a life of
			// window 1 only (L 1, open gap 0). f in 2: ignored again.
			name: "ignored frees",
			tr:   build(3, event{0, f, p1}, event{1, bb, p1}, event{1, f, p1}, event{2, f, p1}),
			want: Stats{Windows: 3, Spaces: 1, Pages: 1, Lives: 1, Births: 1, Frees: 1, IgnoredFrees: 2,
				AlivePageWindows: 1, PeakAlivePages: 1,
				OpenGaps: 1, ClosedGapHist: hist(0), OpenGapHist: hist(1)},
		},
		{
			// b 0, f 1, b 2, (end 4): two lives by birth, 0..1 and 2..3,
			// L 4, open gaps 2-0-1 = 1 and 4-2-1 = 1.
			name: "re-birth after free",
			tr:   build(4, event{0, bb, p1}, event{1, f, p1}, event{2, bb, p1}),
			want: Stats{Windows: 4, Spaces: 1, Pages: 1, Lives: 2, Births: 2, Frees: 1,
				AlivePageWindows: 4, PeakAlivePages: 1,
				OpenGaps: 2, ClosedGapHist: hist(0, 0), OpenGapHist: hist(0, 2)},
		},
		{
			// |A_w| = 5 1 3 2: sorted 1 2 3 5, lower median 2. Pages 0/1..0/5
			// and 3/1, 3/2: spaces 2, pages 7. Page 0/1 is accessed in all
			// four windows, 3/1 in 2 and 3, the others once.
			name: "spaces and median",
			tr: build(0,
				event{0, a, []trace.Page{{Space: 0, Page: 1}, {Space: 0, Page: 2}, {Space: 0, Page: 3}, {Space: 0, Page: 4}, {Space: 0, Page: 5}}},
				event{1, a, []trace.Page{{Space: 0, Page: 1}}},
				event{2, a, []trace.Page{{Space: 0, Page: 1}, {Space: 3, Page: 1}, {Space: 3, Page: 2}}},
				event{3, a, []trace.Page{{Space: 0, Page: 1}, {Space: 3, Page: 1}}}),
			// Lives: 7. L = 4x5 (0/1..0/5) + 2 (3/1) + 2 (3/2) = 24.
			// Closed: 0/1: 0 0 0; 3/1: 2->3 g 0. Open: 0/1 g 0; 0/2..0/5
			// g 3 each; 3/1 g 0; 3/2 g 4-2-1 = 1.
			want: Stats{Windows: 4, Spaces: 2, Pages: 7, Lives: 7, AccessRecords: 11,
				AccessedMin: 1, AccessedMedian: 2, AccessedMax: 5, AlivePageWindows: 24, PeakAlivePages: 7,
				ClosedGaps: 4, OpenGaps: 7, ClosedGapHist: hist(4, 0, 0, 0), OpenGapHist: hist(2, 1, 0, 4)},
		},
		{
			name: "empty windows",
			tr:   build(3),
			want: Stats{Windows: 3, ClosedGapHist: []Bucket{}, OpenGapHist: []Bucket{}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compute(tc.tr.NewReader())
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Window, want.WindowSeconds, want.PageSize = "1s", 1, 4096
			if d := cmp.Diff(&want, got); d != "" {
				t.Errorf("mismatch (-want +got):\n%s", d)
			}
		})
	}
}

// failingReader returns err instead of window n.
type failingReader struct {
	trace.Reader
	n   int
	err error
}

func (f *failingReader) Read() (*trace.Window, error) {
	if f.n == 0 {
		return nil, f.err
	}
	f.n--
	return f.Reader.Read()
}

func TestReadErrorPrefix(t *testing.T) {
	bad := errors.New("example.txt:11: bad page token")
	got, err := Compute(&failingReader{example().NewReader(), 5, bad})
	if !errors.Is(err, bad) {
		t.Fatalf("error = %v, want %v", err, bad)
	}
	// Windows 0..4 of example.txt, lives ending at e = 5:
	//	|A_w| 3 2 2 2 1: Σ 10, sorted 1 2 2 2 3, median 2.
	//	alive: 4 5 5 6 6: L 26, peak 6. Pages 1..6 all seen by window 3.
	//	page 1: closed 0 0 0 0, open 0; page 2: closed 1, open 5-2-1 = 2;
	//	page 3: open 4; page 4 (born): open 4; page 5 (freed in 4): open
	//	3; page 6: open 5-3-1 = 1.
	want := &Stats{
		Windows: 5, Window: "30s", WindowSeconds: 30, PageSize: 4096,
		Spaces: 1, Pages: 6, Lives: 6, AccessRecords: 10, Births: 1, Frees: 1,
		AccessedMin: 1, AccessedMedian: 2, AccessedMax: 3,
		AlivePageWindows: 26, PeakAlivePages: 6,
		ClosedGaps: 5, OpenGaps: 6,
		ClosedGapHist: hist(4, 1, 0, 0),
		OpenGapHist:   hist(1, 1, 1, 3),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
}

func TestBuckets(t *testing.T) {
	// Each g against the documented buckets 0, 1, 2, 3-4, 5-8, 9-16, ...
	for g := 0; g <= 5000; g++ {
		lo, hi := bucketRange(bucketOf(g))
		if g < lo || g > hi {
			t.Fatalf("g = %d in bucket %d = %d-%d", g, bucketOf(g), lo, hi)
		}
	}
	for b := 1; b < 40; b++ {
		_, prevHi := bucketRange(b - 1)
		lo, _ := bucketRange(b)
		if lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, previous ends at %d", b, lo, prevHi)
		}
	}
}

// naive recomputes the stats of t window by window from SPEC section 1,
// page by page, with no Walker: an independent check of Compute.
func naive(t *trace.Trace) *Stats {
	W := len(t.Windows)
	s := &Stats{Windows: W, Window: trace.FormatDuration(t.Header.Window), WindowSeconds: t.Header.Window.Seconds(),
		PageSize: t.Header.PageSize, Pages: len(t.Pages)}
	spaces := map[uint32]bool{}
	for _, p := range t.Pages {
		spaces[p.Space] = true
	}
	s.Spaces = len(spaces)
	alive := make([]bool, len(t.Pages))
	last := make([]int, len(t.Pages))
	var closed, open []int64
	add := func(h *[]int64, g int) {
		b := 0
		for hi := 0; g > hi; b++ { // buckets end at 0, 1, 2, 4, 8, ...
			hi = max(1, 2*hi)
		}
		for len(*h) <= b {
			*h = append(*h, 0)
		}
		(*h)[b]++
	}
	var sizes []int64
	for w, win := range t.Windows {
		has := func(l []uint32, id int) bool { return slices.Contains(l, uint32(id)) }
		sizes = append(sizes, int64(len(win.Accessed)))
		s.AccessRecords += int64(len(win.Accessed))
		n := int64(0)
		for id := range t.Pages {
			switch {
			case has(win.Accessed, id) && alive[id]:
				add(&closed, w-last[id]-1)
				s.ClosedGaps++
				last[id] = w
			case has(win.Accessed, id):
				alive[id], last[id] = true, w
				s.Lives++
			case has(win.Born, id) && alive[id]:
				s.IgnoredBirths++
			case has(win.Born, id):
				alive[id], last[id] = true, w
				s.Lives++
				s.Births++
			}
			if alive[id] {
				n++
			}
			if has(win.Freed, id) {
				if !alive[id] {
					s.IgnoredFrees++
					continue
				}
				s.Frees++
				alive[id] = false
				add(&open, w+1-last[id]-1)
				s.OpenGaps++
			}
		}
		s.AlivePageWindows += n
		s.PeakAlivePages = max(s.PeakAlivePages, n)
	}
	for id := range t.Pages {
		if alive[id] {
			add(&open, W-last[id]-1)
			s.OpenGaps++
		}
	}
	if W > 0 {
		slices.Sort(sizes)
		s.AccessedMin, s.AccessedMedian, s.AccessedMax = sizes[0], sizes[(W-1)/2], sizes[W-1]
	}
	n := max(len(closed), len(open))
	s.ClosedGapHist = histogram(closed, n)
	s.OpenGapHist = histogram(open, n)
	return s
}

// randomTrace returns a small trace with accesses, births (also of alive
// pages), frees (also of dead pages), several spaces and empty windows.
func randomTrace(seed uint64) *trace.Trace {
	rng := testutil.Rand(seed)
	W := rng.IntN(40)
	b := trace.NewBuilder(trace.Header{PageSize: 4096, Window: 30 * time.Second, Windows: W})
	np := 1 + rng.IntN(12)
	for w := 0; w < W; w++ {
		if rng.IntN(5) == 0 {
			continue // empty window
		}
		for p := 0; p < np; p++ {
			pg := trace.Page{Space: uint32(p % 3), Page: uint64(p)}
			for _, k := range []trace.Kind{trace.Access, trace.Birth, trace.Free} {
				if rng.IntN(4) == 0 {
					b.Add(w, k, pg)
				}
			}
		}
	}
	return b.Trace()
}

func TestAgainstNaive(t *testing.T) {
	seed := testutil.Seed(t, 2)
	for i := uint64(0); i < 1000; i++ {
		tr := randomTrace(seed + i)
		got, err := Compute(tr.NewReader())
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(naive(tr), got); d != "" {
			t.Fatalf("trace seed %d: mismatch (-naive +Compute):\n%s", seed+i, d)
		}
		// Invariants: every touch starts a gap; every life ends in one
		// open gap.
		if got.ClosedGaps+got.Lives != got.AccessRecords+got.Births || got.OpenGaps != got.Lives {
			t.Fatalf("trace seed %d: gap counts %+v", seed+i, got)
		}
	}
}

func BenchmarkCompute(b *testing.B) {
	// A synthetic trace: 2000 windows, 20000 pages, each accessed with
	// probability 1/8 per window (about 5 million access records).
	rng := testutil.Rand(1)
	const W, P = 2000, 20000
	tr := &trace.Trace{Header: trace.DefaultHeader()}
	for p := 0; p < P; p++ {
		tr.Pages = append(tr.Pages, trace.Page{Page: uint64(p)})
	}
	var records int64
	for w := 0; w < W; w++ {
		win := trace.Window{Index: w}
		if w == 0 {
			win.New = tr.Pages
		}
		for p := 0; p < P; p++ {
			if rng.IntN(8) == 0 {
				win.Accessed = append(win.Accessed, uint32(p))
			}
		}
		records += int64(len(win.Accessed))
		tr.Windows = append(tr.Windows, win)
	}
	tr.Header.Windows = W
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(tr.NewReader()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
