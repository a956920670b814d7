package trace_test

import (
	"math/rand/v2"
	"testing"

	"mdk/trace"
)

// TestPartitionSpan: the digits a reader checks a partition's new pages
// against (one hash and two comparisons a page) tile the trace's digits in
// order, and hold exactly the pages the partitioner puts in the partition:
// equal partitions (versions 3 and 4, where the partition is the digit
// scaled), the default cuts, cuts of one's own, and a sampled trace's.
func TestPartitionSpan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 25))
	all := trace.Sample{}
	tenth := trace.Sample{Seed: 99, PPM: 100_000}
	cases := []struct {
		name string
		p    trace.Partitioning
		s    trace.Sample
	}{
		{"1 equal", trace.Partitioning{Count: 1, Seed: 3}, all},
		{"7 equal", trace.Partitioning{Count: 7, Seed: 3, Cuts: trace.EqualCuts(7, trace.SampleAll)}, all},
		{"100 equal, no cuts", trace.Partitioning{Count: 100, Seed: 5}, all},
		{"12 default", trace.Partitioning{Count: 12, Seed: 3, Cuts: trace.DefaultCuts(12, trace.SampleAll)}, all},
		{"own cuts", trace.Partitioning{Count: 4, Seed: 8, Cuts: []uint32{0, 10, 500_000, 500_001, trace.SampleAll}}, all},
		{"sampled, 9 equal", trace.Partitioning{Count: 9, Cuts: trace.EqualCuts(9, 100_000)}, tenth},
		{"sampled, 12 default", trace.Partitioning{Count: 12, Cuts: trace.DefaultCuts(12, 100_000)}, tenth},
	}
	for _, c := range cases {
		rate := uint64(trace.SampleAll)
		if !c.s.All() {
			rate = uint64(c.s.PPM)
		}
		var prev uint64
		for i := range c.p.Count {
			lo, hi, _, _ := trace.PartitionSpan(c.p, c.s, i, trace.Page{})
			if lo != prev || hi < lo {
				t.Fatalf("%s: partition %d spans %d..%d after %d", c.name, i, lo, hi, prev)
			}
			prev = hi
		}
		if prev != rate {
			t.Fatalf("%s: the spans end at %d, want %d", c.name, prev, rate)
		}
		for range 20000 {
			pg := trace.Page{Space: uint32(rng.IntN(4)), Page: rng.Uint64N(1 << 40)}
			for i := range c.p.Count {
				lo, hi, of, q := trace.PartitionSpan(c.p, c.s, i, pg)
				if in := lo <= q && q < hi; in != (of == i) {
					t.Fatalf("%s: page %v (digit %d) in partition %d's span %d..%d: %v, but the partitioner says partition %d", c.name, pg, q, i, lo, hi, in, of)
				}
			}
		}
	}
}
