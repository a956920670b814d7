package mpc

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// encodePartitioned returns tr as a partitioned binary trace (the current
// version) of parts, its header's window count set.
func encodePartitioned(t testing.TB, tr *trace.Trace, parts trace.Partitioning) []byte {
	t.Helper()
	h := tr.Header
	h.Windows = len(tr.Windows)
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriter(&buf, h, parts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trace.Copy(w, tr.NewReader()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sampleTraces returns 120 random traces and every gen model's small trace
// (seeds from genSeed), and a 20,000-page gen trace of 60 windows (seed
// bigSeed).
func sampleTraces(t *testing.T, rng *rand.Rand, genSeed, bigSeed uint64) (trs []*trace.Trace, big *trace.Trace) {
	t.Helper()
	for range testutil.Count(120) {
		trs = append(trs, testutil.RandomTrace(rng))
	}
	for i, m := range gen.Models {
		trs = append(trs, smallGen(t, m, genSeed+uint64(i)))
	}
	cfg := gen.DefaultConfig
	cfg.Pages, cfg.Windows, cfg.Seed = 20000, 60, bigSeed
	big, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return trs, big
}

// TestSampledPartitionsSame: on a partitioned trace whose first
// partitions are exactly the sample, the pass that walks them apart
// (sampledPartitions: one page state per partition, each gap counted in
// its page's sub-sample) gives what generateSampled gives on the same
// trace unpartitioned, integer for integer: the sample's results and
// each sub-sample's totals, every printed bound, the CSV and the JSON
// (checkTotals, against the run without GroupTotals, and sameResults
// against the unpartitioned run with them); on random traces and every
// gen model and a 20,000-page gen trace, with the default ladder of cuts
// and cuts of their own, 1 to 12 partitions selected, 2 to 12
// sub-samples and the default. Where the partitions are not exactly the
// sample, it declines, and Generate's split gives the same results too.
func TestSampledPartitionsSame(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 43))
	trs, big := sampleTraces(t, rng, 15, 11)
	trs = append(trs, big)
	var hist []policy.Setting
	for _, p := range policy.DefaultPolicies {
		hist = append(hist, policy.DefaultGrid(p, trace.DefaultWindow)...)
	}
	hist = append(hist, edgeSettings()...)
	ctx := context.Background()
	taken := 0
	for i, tr := range trs {
		seed := rng.Uint64()
		var parts trace.Partitioning
		var s trace.Sample
		k := []int{0, 2, 3, 7, 12, 64}[i%6]
		switch i % 4 {
		case 0: // the default ladder: 0.1%, 1%, 10%, then equal parts
			n := 4 + rng.IntN(9)
			parts = trace.Partitioning{Count: n, Seed: seed}
			s = trace.Sample{PPM: []int64{1000, 10000, 100000}[rng.IntN(3)], Seed: seed}
		case 1: // cuts of its own, the sample their first one or more
			parts = trace.Partitioning{Count: 4, Seed: seed, Cuts: []uint32{0, 50000, 100000, 500000, 1000000}}
			s = trace.Sample{PPM: []int64{50000, 100000, 500000}[rng.IntN(3)], Seed: seed}
		case 2: // equal partitions
			parts = trace.Partitioning{Count: 10, Seed: seed, Cuts: trace.EqualCuts(10, trace.SampleAll)}
			s = trace.Sample{PPM: []int64{100000, 200000, 500000}[rng.IntN(3)], Seed: seed}
		case 3: // not exactly partitions: declined
			parts = trace.Partitioning{Count: 4, Seed: seed, Cuts: []uint32{0, 50000, 100000, 500000, 1000000}}
			s = trace.Sample{PPM: []int64{10000, 250000}[rng.IntN(2)], Seed: seed}
		}
		if i == len(trs)-1 {
			parts, s, k = trace.Partitioning{Count: 12, Seed: 1}, trace.Sample{PPM: 10000, Seed: 1}, 0
		}
		name := fmt.Sprintf("trace %d, %d partitions %v, sample %v, %d groups", i, parts.Count, parts.Cuts, s, k)
		b := encodePartitioned(t, tr, parts)
		opts := Options{Sample: s, Groups: k, GroupTotals: true}
		want, err := Generate(ctx, tr.NewReader(), hist, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		full, err := Generate(ctx, tr.NewReader(), hist, Options{Sample: s, Groups: k})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r, err := trace.NewBinaryReader(bytes.NewReader(b), name)
		if err != nil {
			t.Fatal(err)
		}
		pr, ok := r.(trace.PartitionedReader)
		if !ok {
			t.Fatalf("%s: not a partitioned reader", name)
		}
		kk := k
		if kk == 0 {
			kk = DefaultGroups
		}
		got, done, err := sampledPartitions(ctx, pr, hist, s, kk, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n, exact := trace.PartitionsOf(pr.Partitioning(), trace.Sample{}, s); done != (exact && len(tr.Windows) > 0) { // no windows: nothing to pack
			t.Fatalf("%s: done %v, but the first %d partitions are the sample: %v", name, done, n, exact)
		}
		if !done {
			// Declined: Generate splits the merged sample.
			if got, err = Generate(ctx, r, hist, opts); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		} else {
			taken++
		}
		if !sameResults(got, want) {
			t.Fatalf("%s: results differ from the unpartitioned run's", name)
		}
		checkTotals(t, name, full, got)
		// And through Generate, as mdk mpc calls it.
		r, err = trace.NewBinaryReader(bytes.NewReader(b), name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err = Generate(ctx, r, hist, opts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !sameResults(got, want) {
			t.Fatalf("%s: Generate's results differ from the unpartitioned run's", name)
		}
	}
	if taken < len(trs)/2 {
		t.Fatalf("the partitions' pass ran on %d of %d traces", taken, len(trs))
	}
}

// TestSampledPartitionsDeclines: with gap-by-gap settings (lopp), without
// GroupTotals or sub-samples, the partitions' pass is not taken, and the
// results are the split's.
func TestSampledPartitionsDeclines(t *testing.T) {
	tr := smallGen(t, "mix", 3)
	parts := trace.Partitioning{Count: 12, Seed: 1}
	s := trace.Sample{PPM: 100000, Seed: 1}
	b := encodePartitioned(t, tr, parts)
	ctx := context.Background()
	for _, c := range []struct {
		ss   []policy.Setting
		opts Options
	}{
		{totalsSettings(), Options{Sample: s, GroupTotals: true}},
		{edgeSettings(), Options{Sample: s}},
		{edgeSettings(), Options{Sample: s, Groups: 1, GroupTotals: true}},
	} {
		r, err := trace.NewBinaryReader(bytes.NewReader(b), "mix")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Generate(ctx, r, c.ss, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Generate(ctx, tr.NewReader(), c.ss, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if !sameResults(got, want) {
			t.Fatalf("%+v: results differ", c.opts)
		}
		var gb, wb bytes.Buffer
		if err := result.WriteJSON(&gb, got, true); err != nil {
			t.Fatal(err)
		}
		if err := result.WriteJSON(&wb, want, true); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gb.Bytes(), wb.Bytes()) {
			t.Fatalf("%+v: JSON differs", c.opts)
		}
	}
}
