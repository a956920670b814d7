package trace_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/trace"
)

func walk(t *trace.Trace, wk *trace.Walker) []trace.Gap {
	var gaps []trace.Gap
	wk.OnGap = func(g trace.Gap) { gaps = append(gaps, g) }
	r := t.NewReader()
	for {
		w, err := r.Read()
		if err != nil {
			break
		}
		wk.Window(w)
	}
	wk.Finish()
	return gaps
}

func sortGaps(gs []trace.Gap) {
	slices.SortFunc(gs, func(a, b trace.Gap) int {
		if a.Page != b.Page {
			return int(a.Page) - int(b.Page)
		}
		return a.Start - b.Start
	})
}

// histTraces returns random traces for the HistWalker tests: small ones
// with every event kind, and one of 60,000 pages whose lists span many
// chunks, with births and frees in the same windows as accesses.
func histTraces(t *testing.T, seed uint64) []*trace.Trace {
	rng := testutil.Rand(testutil.Seed(t, seed))
	var traces []*trace.Trace
	for n := 0; n < testutil.Count(1000); n++ {
		traces = append(traces, testutil.RandomTrace(rng))
	}
	b := trace.NewBuilder(trace.DefaultHeader())
	for w := 0; w < 30; w++ {
		for p := 0; p < 60000; p++ {
			page := trace.Page{Page: uint64(p)}
			if rng.IntN(3) == 0 {
				b.Add(w, trace.Access, page)
			}
			if rng.IntN(12) == 0 {
				b.Add(w, trace.Birth, page)
			}
			if rng.IntN(12) == 0 {
				b.Add(w, trace.Free, page)
			}
		}
	}
	return append(traces, b.Trace())
}

type histKey struct {
	end, idle, class int
	closed           bool
}

// TestHistWalker checks that a HistWalker counts exactly the gaps, by
// window, idle length and prior class, that a Walker reports to OnGap, and
// the same Counts: on one goroutine and on several, with chunks of every
// size down to one ID, with 4-byte words, with 8-byte words from the start
// (more than 2^16 classes), and with words widened in the middle of the
// trace.
func TestHistWalker(t *testing.T) {
	classes3 := func(d int) int { // d <= 1, 2..4, >= 5 or infinite
		switch {
		case d == trace.Inf || d >= 5:
			return 2
		case d >= 2:
			return 1
		}
		return 0
	}
	many := 1<<16 + 5
	classesMany := func(d int) int { return min(d, many-1) }
	type config struct {
		walkers, chunk, limit int
		classes               int
		class                 func(int) int
	}
	configs := []config{
		{walkers: 1, classes: 3, class: classes3},
		{walkers: 2, classes: 3, class: classes3},
		{walkers: 3, chunk: 1, classes: 3, class: classes3},
		{walkers: 2, chunk: 7, limit: 3, classes: 3, class: classes3},
		{walkers: 1, limit: 1, classes: 3, class: classes3},
		{walkers: 2, chunk: 5, classes: many, class: classesMany},
	}
	for n, tr := range histTraces(t, 10) {
		for ci, cfg := range configs {
			if cfg.classes == many && n%50 != 0 {
				continue // big histograms: a few traces are enough
			}
			want := map[histKey]int64{}
			one := trace.NewWalker()
			for _, g := range walk(tr, one) {
				want[histKey{g.End(), g.Idle, cfg.class(g.Prior), g.Closed}]++
			}
			got, counts := histWalk(tr, cfg.walkers, cfg.chunk, cfg.limit, cfg.classes, cfg.class)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("trace %d, config %d: histogram differs (-Walker +HistWalker):\n%s", n, ci, d)
			}
			if counts != one.Counts {
				t.Fatalf("trace %d, config %d: counts %+v, want %+v", n, ci, counts, one.Counts)
			}
		}
	}
}

// histWalk walks tr with a HistWalker of the given shape (chunk and limit
// 0: the defaults) and returns the gaps it counted and its Counts.
func histWalk(tr *trace.Trace, walkers, chunk, limit, classes int, class func(int) int) (map[histKey]int64, trace.Counts) {
	var hs []*trace.GapHistogram
	for range walkers {
		hs = append(hs, trace.NewGapHistogram(classes, class))
	}
	hw := trace.NewHistWalker(hs)
	defer hw.Close()
	if chunk > 0 {
		trace.SetHistChunk(hw, chunk)
	}
	if limit > 0 {
		trace.SetPackLimit(hw, limit)
	}
	got := map[histKey]int64{}
	drain := func(closed bool, end int) {
		for _, h := range hs {
			for _, c := range h.Drain(closed, nil) {
				got[histKey{end, int(c.Idle), int(c.Class), closed}] += c.N
			}
		}
	}
	r := trace.Lookahead(tr.NewReader())
	for {
		w, err := r.Read()
		if err != nil {
			break
		}
		hw.Window(w)
		drain(true, w.Index)
		drain(false, w.Index+1)
	}
	hw.Finish()
	drain(false, len(tr.Windows))
	return got, hw.Counts
}
