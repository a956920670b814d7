package trace_test

import (
	"slices"
	"testing"

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

// TestShardWalkers checks that shard walkers together see exactly the gaps
// and counts of one walker.
func TestShardWalkers(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 9))
	var traces []*trace.Trace
	for n := 0; n < testutil.Count(1000); n++ {
		traces = append(traces, testutil.RandomTrace(rng))
	}
	// Shards are blocks of 4096 IDs: a trace of 20,000 pages spreads over
	// several blocks of each shard.
	b := trace.NewBuilder(trace.DefaultHeader())
	for w := 0; w < 30; w++ {
		for p := 0; p < 20000; p++ {
			switch x := rng.IntN(10); {
			case x < 3:
				b.Add(w, trace.Access, trace.Page{Page: uint64(p)})
			case x == 3 && rng.IntN(8) == 0:
				b.Add(w, trace.Free, trace.Page{Page: uint64(p)})
			case x == 4 && rng.IntN(8) == 0:
				b.Add(w, trace.Birth, trace.Page{Page: uint64(p)})
			}
		}
	}
	traces = append(traces, b.Trace())
	for n, tr := range traces {
		one := trace.NewWalker()
		want := walk(tr, one)
		sortGaps(want)
		for _, bits := range []uint{1, 2} {
			var got []trace.Gap
			var sum trace.Counts
			for s := uint32(0); s < 1<<bits; s++ {
				wk := trace.NewShardWalker(s, bits)
				got = append(got, walk(tr, wk)...)
				c := wk.Counts
				sum.Lives += c.Lives
				sum.Births += c.Births
				sum.Frees += c.Frees
				sum.IgnoredBirths += c.IgnoredBirths
				sum.IgnoredFrees += c.IgnoredFrees
				sum.AccessRecords += c.AccessRecords
				sum.AlivePageWins += c.AlivePageWins
				sum.ClosedGaps += c.ClosedGaps
				sum.OpenGaps += c.OpenGaps
			}
			sortGaps(got)
			if !slices.Equal(want, got) {
				t.Fatalf("trace %d, %d shards: gaps differ:\n one %v\nshards %v", n, 1<<bits, want, got)
			}
			w := one.Counts
			w.PeakAlive, w.Alive = 0, 0
			if sum != w {
				t.Fatalf("trace %d, %d shards: counts %+v, want %+v", n, 1<<bits, sum, w)
			}
		}
	}
}

// TestGapHistogram checks that a walker counting into a GapHistogram sees
// the same gaps, by window, idle length and prior class, as OnGap.
func TestGapHistogram(t *testing.T) {
	class := func(d int) int { // classes: d <= 1, 2..4, >= 5 or infinite
		switch {
		case d == trace.Inf || d >= 5:
			return 2
		case d >= 2:
			return 1
		}
		return 0
	}
	type key struct {
		end, idle, class int
		closed           bool
	}
	rng := testutil.Rand(testutil.Seed(t, 10))
	for n := 0; n < testutil.Count(1000); n++ {
		tr := testutil.RandomTrace(rng)
		want := map[key]int64{}
		for _, g := range walk(tr, trace.NewWalker()) {
			want[key{g.End(), g.Idle, class(g.Prior), g.Closed}]++
		}
		got := map[key]int64{}
		h := trace.NewGapHistogram(3, class)
		wk := trace.NewWalker()
		wk.Hist = h
		var cs []trace.GapCount
		for w := range tr.Windows {
			h.Grow(w)
			wk.Window(&tr.Windows[w])
			for _, closed := range []bool{true, false} {
				end := w + map[bool]int{true: 0, false: 1}[closed]
				for _, c := range h.Drain(closed, cs[:0]) {
					got[key{end, int(c.Idle), int(c.Class), closed}] += c.N
				}
			}
		}
		wk.Finish()
		for _, c := range h.Drain(false, cs[:0]) {
			got[key{len(tr.Windows), int(c.Idle), int(c.Class), false}] += c.N
		}
		if len(got) != len(want) {
			t.Fatalf("trace %d: %d cells, want %d", n, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("trace %d: %+v counted %d, want %d", n, k, got[k], v)
			}
		}
	}
}
