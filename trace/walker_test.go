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
