package lopp

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"mdk/internal/testutil"
	"mdk/trace"
)

type key struct {
	w    int
	page uint32
}

type bfRow struct {
	feat   [NumFeatures]int
	idle   int
	closed bool
	label  bool
	// censored: the life is alive at the end of the windows read.
	censored bool
}

// bruteForce labels the first W windows of tr straight from SPEC sections 1
// and 2, without the Walker: it collects the touch windows of every life,
// derives gaps and prior reuse distances from them, and runs OPP's selection
// window by window.
func bruteForce(tr *trace.Trace, W int, ppm int64) map[key]*bfRow {
	type life struct {
		page    uint32
		touches []int
		end     int
	}
	var lives []*life
	alive := map[uint32]*life{}
	for w := 0; w < W; w++ {
		win := tr.Windows[w]
		for p := uint32(0); p < uint32(len(tr.Pages)); p++ {
			acc, born, freed := slices.Contains(win.Accessed, p), slices.Contains(win.Born, p), slices.Contains(win.Freed, p)
			l := alive[p]
			switch {
			case acc && l != nil:
				l.touches = append(l.touches, w)
			case acc || (born && l == nil):
				l = &life{page: p, touches: []int{w}, end: -1}
				lives = append(lives, l)
				alive[p] = l
			}
			if freed && l != nil {
				l.end = w + 1
				delete(alive, p)
			}
		}
	}
	rows := map[key]*bfRow{}
	type gap struct {
		r    *bfRow
		page uint32
		idle int
	}
	ending := map[int][]gap{}
	for _, l := range lives {
		censored := l.end < 0
		if censored {
			l.end = W
		}
		for m, t := range l.touches {
			r := &bfRow{}
			for k := range NumFeatures {
				r.feat[k] = -1
				if m-k >= 1 {
					r.feat[k] = l.touches[m-k] - l.touches[m-k-1]
				}
			}
			if m+1 < len(l.touches) {
				r.idle, r.closed = l.touches[m+1]-t-1, true
				if r.idle >= 1 {
					ending[l.touches[m+1]] = append(ending[l.touches[m+1]], gap{r, l.page, r.idle})
				}
			} else {
				r.idle = l.end - t - 1
				r.label = r.idle >= 1
				r.censored = censored
			}
			rows[key{t, l.page}] = r
		}
	}
	for j, gs := range ending {
		budget := int(ppm * int64(len(tr.Windows[j].Accessed)) / 1_000_000)
		slices.SortFunc(gs, func(a, b gap) int {
			if a.idle != b.idle {
				return b.idle - a.idle
			}
			return int(a.page) - int(b.page)
		})
		for _, g := range gs[:min(budget, len(gs))] {
			g.r.label = true
		}
	}
	return rows
}

func TestDatasetBruteForce(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 1))
	positives, rows, censored := 0, 0, 0
	for iter := range 500 {
		tr := testutil.RandomTrace(rng)
		W := len(tr.Windows)
		ppm := []int64{0, 20000, 250000, 500000, 1_000_000, rng.Int64N(1_000_001)}[rng.IntN(6)]
		span := All
		switch rng.IntN(3) {
		case 1:
			span.From = rng.IntN(W + 1)
		case 2:
			span.From = rng.IntN(W + 1)
			span.To = span.From + rng.IntN(W-span.From+1)
		}
		name := fmt.Sprintf("trace %d ppm %d span %v", iter, ppm, span)
		d, err := Dataset(tr.NewReader(), ppm, span)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		read := W
		if span.To >= 0 {
			read = span.To
		}
		if d.Windows != read {
			t.Errorf("%s: %d windows read, want %d", name, d.Windows, read)
		}
		want := bruteForce(tr, read, ppm)
		n := 0
		for k := range want {
			if k.w >= span.From {
				n++
			}
		}
		if d.Len() != n {
			t.Errorf("%s: %d rows, want %d", name, d.Len(), n)
		}
		for i := range d.Len() {
			k := key{int(d.Window[i]), d.Page[i]}
			r := want[k]
			if r == nil {
				t.Errorf("%s: row %d: no touch of page %d in window %d", name, i, k.page, k.w)
				continue
			}
			var feat [NumFeatures]int
			for f, v := range d.Row(i) {
				feat[f] = int(v)
			}
			if feat != r.feat || int(d.Idle[i]) != r.idle || d.Closed[i] != r.closed || d.Y[i] != r.label {
				t.Errorf("%s: page %d window %d: features %v idle %d closed %v label %v; want %v %d %v %v",
					name, k.page, k.w, feat, d.Idle[i], d.Closed[i], d.Y[i], r.feat, r.idle, r.closed, r.label)
			}
			if d.Censored[i] != r.censored {
				t.Errorf("%s: page %d window %d: censored %v, want %v", name, k.page, k.w, d.Censored[i], r.censored)
			}
			if i > 0 && d.Window[i] < d.Window[i-1] {
				t.Errorf("%s: row %d out of window order", name, i)
			}
		}
		x, y := d.Labelled()
		var wantX []float64
		var wantY []bool
		for i := range d.Len() {
			if !want[key{int(d.Window[i]), d.Page[i]}].censored {
				wantX = append(wantX, d.Row(i)...)
				wantY = append(wantY, d.Y[i])
			}
		}
		if !slices.Equal(x, wantX) || !slices.Equal(y, wantY) || d.NumCensored() != d.Len()-len(wantY) {
			t.Errorf("%s: Labelled gives %d rows, want the %d uncensored ones (NumCensored %d)", name, len(y), len(wantY), d.NumCensored())
		}
		positives += d.Positives()
		rows += d.Len()
		censored += d.NumCensored()
	}
	if censored == 0 || censored == rows {
		t.Errorf("random traces gave %d censored rows of %d: the test exercises nothing", censored, rows)
	}
	if positives == 0 || positives == rows {
		t.Errorf("random traces gave %d positive labels of %d: the test exercises nothing", positives, rows)
	}
}

// TestCensoredAtBoundary cuts the training windows through a gap of a
// periodic page: the page is touched every 5 windows, and a second page in
// every window gives OPP budgets. Before the cut, OPP at 1% reclaims none of
// the periodic page's closed gaps (the budget of 2 accessed pages is 0), so
// the touch just before the cut, whose gap OPP would reclaim for free as an
// open one, must not be a "reclaimed" example: it is censored and left out
// of the labelled rows. Without censoring the model would learn that a page
// with prior distances (5, 5) is reclaimed, though it never is.
func TestCensoredAtBoundary(t *testing.T) {
	b := trace.NewBuilder(trace.Header{Window: time.Second})
	for w := range 30 {
		if w%5 == 0 {
			b.Add(w, trace.Access, trace.Page{Page: 0}) // dense ID 0
		}
		b.Add(w, trace.Access, trace.Page{Page: 1})
	}
	tr := b.Trace()
	d, err := Dataset(tr.NewReader(), 10000, Span{0, 12})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range d.Len() {
		if d.Page[i] != 0 {
			continue
		}
		got = append(got, fmt.Sprintf("w%d g=%d closed=%v censored=%v y=%v", d.Window[i], d.Idle[i], d.Closed[i], d.Censored[i], d.Y[i]))
	}
	want := []string{
		"w0 g=4 closed=true censored=false y=false",
		"w5 g=4 closed=true censored=false y=false",
		"w10 g=1 closed=false censored=true y=true", // OPP's free open gap
	}
	if !slices.Equal(got, want) {
		t.Fatalf("rows of the periodic page:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	x, y := d.Labelled()
	for i, yi := range y {
		if x[i*NumFeatures] == 5 && yi {
			t.Errorf("labelled row %d (features %v) says reclaimed: the censored touch leaked into the training set", i, x[i*NumFeatures:(i+1)*NumFeatures])
		}
	}
	if len(y) != d.Len()-2 { // the touches of both pages in window 11 and 10
		t.Errorf("%d labelled rows of %d, want all but the 2 censored ones", len(y), d.Len())
	}
}

// TestExample checks OPP's savings on SPEC section 4's worked example: the
// gaps labelled true save 18 page-windows at r = 25% and 32 at r = 50%.
func TestExample(t *testing.T) {
	for _, tc := range []struct {
		ppm  int64
		want int
	}{{250000, 18}, {500000, 32}} {
		r, c, err := trace.Open("../testdata/example.txt")
		if err != nil {
			t.Fatal(err)
		}
		d, err := Dataset(r, tc.ppm, All)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		saved := 0
		for i, y := range d.Y {
			if y {
				saved += int(d.Idle[i])
			}
		}
		if saved != tc.want {
			t.Errorf("ppm %d: labelled gaps save %d, want %d (SPEC section 4)", tc.ppm, saved, tc.want)
		}
	}
}

type failReader struct {
	trace.Reader
	after int
}

func (f *failReader) Read() (*trace.Window, error) {
	if f.after == 0 {
		return nil, errors.New("x.bin: byte 42: corrupt")
	}
	f.after--
	return f.Reader.Read()
}

func TestDatasetErrors(t *testing.T) {
	tr := testutil.RandomTrace(testutil.Rand(3))
	for _, tc := range []struct {
		name string
		r    trace.Reader
		ppm  int64
		span Span
		want string
	}{
		{"rate", tr.NewReader(), 1_000_001, All, "rate 1000001 ppm"},
		{"negative rate", tr.NewReader(), -1, All, "rate -1 ppm"},
		{"from", tr.NewReader(), 0, Span{-1, 3}, "bad window range: -1..3"},
		{"to", tr.NewReader(), 0, Span{4, 3}, "bad window range: 4..3"},
		{"reader", &failReader{tr.NewReader(), 0}, 0, All, "byte 42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Dataset(tc.r, tc.ppm, tc.span)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
	// A span past the end reads what there is.
	d, err := Dataset(tr.NewReader(), 0, Span{0, len(tr.Windows) + 5})
	if err != nil || d.Windows != len(tr.Windows) {
		t.Errorf("span past the end: %v, %d windows read of %d", err, d.Windows, len(tr.Windows))
	}
}

// TestIdleRowsBruteForce checks the idle-time rows against the brute
// force's touches: for every uncensored touch in the span and every age a
// of IdleAges up to its gap's length, one row (its features, a) labelled
// reclaimed iff OPP reclaims the gap and it lasts more than a; and that the
// page is, straight from the trace's events, alive and not accessed in the a
// windows after the touch (the idle time is what it says).
func TestIdleRowsBruteForce(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 30))
	rows, pos := 0, 0
	for iter := range 400 {
		tr := testutil.RandomTrace(rng)
		W := len(tr.Windows)
		ppm := []int64{20000, 250000, 500000, 1_000_000}[rng.IntN(4)]
		span := All
		if rng.IntN(2) == 1 {
			span.From = rng.IntN(W + 1)
			span.To = span.From + rng.IntN(W-span.From+1)
		}
		read := W
		if span.To >= 0 {
			read = span.To
		}
		d, err := Dataset(tr.NewReader(), ppm, span)
		if err != nil {
			t.Fatal(err)
		}
		x, y := d.IdleRows()
		count := map[string]int{}
		for i := range y {
			count[fmt.Sprint(x[i*(NumFeatures+1):(i+1)*(NumFeatures+1)], y[i])]++
		}
		want := map[string]int{}
		for k, r := range bruteForce(tr, read, ppm) {
			if k.w < span.From || r.censored {
				continue
			}
			for _, a := range IdleAges {
				if a > r.idle {
					break
				}
				for w := k.w + 1; w <= k.w+a; w++ {
					if slices.Contains(tr.Windows[w].Accessed, k.page) {
						t.Fatalf("trace %d: page %d touched in %d is accessed in %d, within idle time %d", iter, k.page, k.w, w, a)
					}
				}
				row := make([]float64, 0, NumFeatures+1)
				for _, f := range r.feat {
					row = append(row, float64(f))
				}
				row = append(row, float64(a))
				want[fmt.Sprint(row, r.label && r.idle-a >= 1)]++
			}
		}
		if !maps.Equal(count, want) {
			t.Fatalf("trace %d ppm %d span %v: idle rows %v, want %v", iter, ppm, span, count, want)
		}
		rows += len(y)
		for _, v := range y {
			if v {
				pos++
			}
		}
	}
	if pos == 0 || pos == rows {
		t.Errorf("%d positive idle rows of %d: the test exercises nothing", pos, rows)
	}
}
