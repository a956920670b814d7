package trace_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// bruteLife is one life of a source page, found by brute force.
type bruteLife struct {
	page     trace.Page
	start, e int // windows start .. e-1
	freed    bool
}

// bruteLives applies SPEC section 1 window by window with a map.
func bruteLives(tr *trace.Trace) ([]bruteLife, []map[trace.Page]bool) {
	type cur struct{ start int }
	alive := map[trace.Page]*cur{}
	var lives []bruteLife
	accessed := make([]map[trace.Page]bool, len(tr.Windows))
	for w, win := range tr.Windows {
		accessed[w] = map[trace.Page]bool{}
		for _, id := range win.Accessed {
			p := tr.Pages[id]
			accessed[w][p] = true
			if alive[p] == nil {
				alive[p] = &cur{w}
			}
		}
		for _, id := range win.Born {
			if p := tr.Pages[id]; alive[p] == nil {
				alive[p] = &cur{w}
			}
		}
		for _, id := range win.Freed {
			if p := tr.Pages[id]; alive[p] != nil {
				lives = append(lives, bruteLife{p, alive[p].start, w + 1, true})
				delete(alive, p)
			}
		}
	}
	for p, c := range alive {
		lives = append(lives, bruteLife{p, c.start, len(tr.Windows), false})
	}
	return lives, accessed
}

// bruteCoarsen is docs/whatif.md's rule, literally: for every unit and
// output window, from the source lives.
func bruteCoarsen(tr *trace.Trace, m, k int) []map[trace.Kind]map[trace.Page]bool {
	lives, accessed := bruteLives(tr)
	W := len(tr.Windows)
	Wo := (W + k - 1) / k
	unit := func(p trace.Page) trace.Page { return trace.Page{Space: p.Space, Page: p.Page / uint64(m)} }
	out := make([]map[trace.Kind]map[trace.Page]bool, Wo)
	for wo := range out {
		first, last := wo*k, min(wo*k+k, W)-1
		o := map[trace.Kind]map[trace.Page]bool{trace.Access: {}, trace.Birth: {}, trace.Free: {}}
		alive, in, cont := map[trace.Page]bool{}, map[trace.Page]bool{}, map[trace.Page]bool{}
		for _, l := range lives {
			u := unit(l.page)
			if l.start <= last && l.e > first {
				alive[u] = true
			}
			if l.start < first && l.e > first { // alive in first-1 and in first
				in[u] = true
			}
			if l.start <= last && (l.e > last+1 || l.e == last+1 && !l.freed) {
				cont[u] = true
			}
		}
		acc := map[trace.Page]bool{}
		for w := first; w <= last; w++ {
			for p := range accessed[w] {
				acc[unit(p)] = true
			}
		}
		for u := range alive {
			if acc[u] {
				o[trace.Access][u] = true
			} else if !in[u] {
				o[trace.Birth][u] = true
			}
			if !cont[u] {
				o[trace.Free][u] = true
			}
		}
		out[wo] = o
	}
	return out
}

func readSets(t *testing.T, r trace.Reader) *pageSets {
	t.Helper()
	ps := &pageSets{}
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			return ps
		}
		if err != nil {
			t.Fatal(err)
		}
		ps.add(t, w)
	}
}

// TestCoarsenBruteForce checks --page-size and --window-factor against the
// brute-force rule on random traces (several spaces, re-births, ignored
// births and frees, frees and accesses in one window).
func TestCoarsenBruteForce(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 31))
	for n := range testutil.Count(600) {
		tr := testutil.RandomTrace(rng)
		m, k := 1+rng.IntN(5), 1+rng.IntN(4)
		if n%7 == 0 {
			m = 1
		}
		cr, err := trace.NewCoarsenReader(tr.NewReader(), trace.Coarsen{PageFactor: m, WindowFactor: k})
		if err != nil {
			t.Fatal(err)
		}
		h := cr.Header()
		if h.PageSize != tr.Header.PageSize*m || h.Window != tr.Header.Window*time.Duration(k) {
			t.Fatalf("trace %d: header %+v", n, h)
		}
		got := readSets(t, cr)
		want := bruteCoarsen(tr, m, k)
		if !equalSets(got.wins, want) {
			t.Fatalf("trace %d, page factor %d, window factor %d:\n got %v\nwant %v\nsource:\n%s", n, m, k, got.wins, want, testutil.EncodeText(t, tr))
		}
		if h.Windows != 0 && h.Windows != len(want) {
			t.Fatalf("trace %d: header says %d windows, %d read", n, h.Windows, len(want))
		}
	}
}

// TestCoarsenIdentity: with both factors 1 the transform only drops the
// events the model ignores, so the simulator gives every setting the same
// numbers on it as on the source.
func TestCoarsenIdentity(t *testing.T) {
	var ss []policy.Setting
	for _, spec := range []string{"age:A=0|1|3", "vmin:T=0|2", "opp:r=10%|50%", "paw:P=1,wait=1", "pace:P=2,A=1"} {
		s, err := policy.Parse(spec, trace.DefaultWindow)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s...)
	}
	rng := testutil.Rand(testutil.Seed(t, 32))
	for n := range testutil.Count(200) {
		tr := testutil.RandomTrace(rng)
		cr, err := trace.NewCoarsenReader(tr.NewReader(), trace.Coarsen{PageFactor: 1, WindowFactor: 1})
		if err != nil {
			t.Fatal(err)
		}
		out, err := trace.ReadAll(cr)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss {
			a, b := sim.Run(tr, s), sim.Run(out, s)
			if d := cmp.Diff(a, b); d != "" {
				t.Fatalf("trace %d, %s (-source +transformed):\n%s", n, policy.String(s), d)
			}
		}
	}
}

func TestCoarsenRefuses(t *testing.T) {
	tr := testutil.RandomTrace(testutil.Rand(1))
	for _, c := range []trace.Coarsen{{PageFactor: 0, WindowFactor: 1}, {PageFactor: 1, WindowFactor: 0}} {
		if _, err := trace.NewCoarsenReader(tr.NewReader(), c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	tr.Header.Sample = trace.Sample{PPM: 10000, Seed: 1}
	if _, err := trace.NewCoarsenReader(tr.NewReader(), trace.Coarsen{PageFactor: 2, WindowFactor: 1}); err == nil {
		t.Error("a sampled trace changed page size")
	}
	if _, err := trace.NewCoarsenReader(tr.NewReader(), trace.Coarsen{PageFactor: 1, WindowFactor: 2}); err != nil {
		t.Errorf("a sampled trace refused a window factor: %v", err)
	}
}
