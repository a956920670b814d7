package trace_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// TestGroupWalkerEqualsSplit: a GroupWalker over the partitions that are
// exactly a sample counts, window by window and sub-sample by sub-sample,
// the gaps (by idle length and class), accessed and alive pages that a
// SampleSplit's groups walked by HistWalkers count, and the same alive
// page-windows and open gaps at the end; on random traces in partitioned
// versions 3, 4 and 5, 2 to 64 sub-samples.
func TestGroupWalkerEqualsSplit(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 29))
	classOf := func(d int) int {
		if d == trace.Inf {
			return 4
		}
		return min(d, 3)
	}
	const classes = 5
	for i := range testutil.Count(300) {
		tr := testutil.RandomTrace(rng)
		tr.Header.Windows = len(tr.Windows)
		if len(tr.Windows) == 0 {
			continue
		}
		seed := rng.Uint64()
		version := partVersions[i%len(partVersions)]
		var parts trace.Partitioning
		var s trace.Sample
		if version == trace.BinaryPartitionedVersion {
			parts = trace.Partitioning{Count: 4 + rng.IntN(6), Seed: seed}
			s = trace.Sample{PPM: []int64{1000, 10000, 100000}[rng.IntN(3)], Seed: seed}
		} else {
			parts = trace.Partitioning{Count: 10, Seed: seed}
			s = trace.Sample{PPM: []int64{100000, 200000, 500000}[rng.IntN(3)], Seed: seed}
		}
		k := []int{2, 3, 10, 64}[rng.IntN(4)]
		name := fmt.Sprintf("trace %d, version %d, %d partitions, %v, %d groups", i, version, parts.Count, s, k)
		b := encodePartsP(t, tr, parts, version)

		// The reference: the split's groups, each walked on its own.
		r, err := trace.NewBinaryReader(bytes.NewReader(b), name)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := trace.NewSampleSplit(r, s, k)
		if err != nil {
			t.Fatal(err)
		}
		var hws []*trace.HistWalker
		var hgs []*trace.GapHistogram
		for range k {
			h := trace.NewGapHistogram(classes, classOf)
			hgs = append(hgs, h)
			hws = append(hws, trace.NewHistWalker([]*trace.GapHistogram{h}))
		}
		type win struct {
			closed, open    [][]trace.GapCount
			accessed, alive []int64
		}
		var want []win
		for {
			ws, err := sp.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			x := win{closed: make([][]trace.GapCount, k), open: make([][]trace.GapCount, k), accessed: make([]int64, k), alive: make([]int64, k)}
			for g, hw := range hws {
				before := hw.Counts.AlivePageWins
				hw.Window(&ws[1+g])
				x.accessed[g] = int64(len(ws[1+g].Accessed))
				x.alive[g] = hw.Counts.AlivePageWins - before
				x.closed[g] = sorted(hgs[g].Drain(true, nil))
				x.open[g] = sorted(hgs[g].Drain(false, nil))
			}
			want = append(want, x)
		}
		wantEnd := make([][]trace.GapCount, k)
		for g, hw := range hws {
			hw.Finish()
			wantEnd[g] = sorted(hgs[g].Drain(false, nil))
			hw.Close()
		}

		r, err = trace.NewBinaryReader(bytes.NewReader(b), name)
		if err != nil {
			t.Fatal(err)
		}
		pr := r.(trace.PartitionedReader)
		n, exact := trace.PartitionsOf(pr.Partitioning(), trace.Sample{}, s)
		if !exact {
			t.Fatalf("%s: the partitions are not the sample", name)
		}
		pr.SelectPartitions(n)
		gw, err := trace.NewGroupWalker(pr, s, k, classes, classOf, len(tr.Windows))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		closed, open := make([][]trace.GapCount, k), make([][]trace.GapCount, k)
		w := 0
		for {
			first, nw, err := pr.NextSegment()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for ; w < first+nw; w++ {
				if err := gw.Window(w); err != nil {
					t.Fatalf("%s: window %d: %v", name, w, err)
				}
				for g := range k {
					closed[g], open[g] = nil, nil
				}
				closed, open = gw.Drain(true, closed), gw.Drain(false, open)
				for g := range k {
					x := want[w]
					if !slices.Equal(sorted(closed[g]), x.closed[g]) || !slices.Equal(sorted(open[g]), x.open[g]) ||
						gw.Accessed[g] != x.accessed[g] || gw.Alive[g] != x.alive[g] {
						t.Fatalf("%s: window %d, group %d: closed %v open %v accessed %d alive %d; want %v %v %d %d", name, w, g,
							closed[g], open[g], gw.Accessed[g], gw.Alive[g], x.closed[g], x.open[g], x.accessed[g], x.alive[g])
					}
				}
			}
		}
		if w != len(want) {
			t.Fatalf("%s: %d windows walked, want %d", name, w, len(want))
		}
		gw.Finish()
		for g := range k {
			open[g] = nil
		}
		open = gw.Drain(false, open)
		for g := range k {
			if !slices.Equal(sorted(open[g]), wantEnd[g]) || gw.AlivePageWins[g] != hws[g].Counts.AlivePageWins {
				t.Fatalf("%s: group %d at the end: open %v, %d alive page-windows; want %v, %d", name, g, open[g], gw.AlivePageWins[g], wantEnd[g], hws[g].Counts.AlivePageWins)
			}
		}
		if gw.Pages != sp.Kept() {
			t.Fatalf("%s: %d pages, want %d", name, gw.Pages, sp.Kept())
		}
	}
}

// sorted returns es in (idle, class) order.
func sorted(es []trace.GapCount) []trace.GapCount {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b trace.GapCount) int {
		return cmp.Or(cmp.Compare(a.Idle, b.Idle), cmp.Compare(a.Class, b.Class))
	})
	return es
}

// TestGroupWalkerRefuses: too many windows, sub-samples or classes to pack
// are refused, so that the caller walks another way.
func TestGroupWalkerRefuses(t *testing.T) {
	tr := testutil.RandomTrace(testutil.Rand(1))
	tr.Header.Windows = len(tr.Windows)
	b := encodePartsP(t, tr, trace.Partitioning{Count: 12, Seed: 1}, trace.BinaryPartitionedVersion)
	r, err := trace.NewBinaryReader(bytes.NewReader(b), "t")
	if err != nil {
		t.Fatal(err)
	}
	pr := r.(trace.PartitionedReader)
	s := trace.Sample{PPM: 10000, Seed: 1}
	class := func(int) int { return 0 }
	for _, c := range []struct{ k, classes, windows int }{
		{1, 2, 10}, {65, 2, 10}, {10, 1 << 13, 10}, {10, 16, 0}, {10, 16, 1 << 25},
	} {
		if _, err := trace.NewGroupWalker(pr, s, c.k, c.classes, class, c.windows); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if _, err := trace.NewGroupWalker(pr, s, 10, 16, class, 1<<20); err != nil {
		t.Errorf("10 sub-samples, 16 classes, 2^20 windows: %v", err)
	}
}
