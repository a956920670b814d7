package trace_test

import (
	"errors"
	"io"
	"os"
	"testing"

	"mdk/trace"
)

// BenchmarkGroupWalker walks a 1% sample (seed 1, 10 sub-samples) of the
// partitioned trace in $MDK_BENCH_TRACE with a GroupWalker (decoding
// included; 12 classes); skipped without it.
func BenchmarkGroupWalker(b *testing.B) {
	path := os.Getenv("MDK_BENCH_TRACE")
	if path == "" {
		b.Skip("set MDK_BENCH_TRACE to a partitioned trace")
	}
	class := func(d int) int {
		if d == trace.Inf {
			return 11
		}
		return min(d/4, 10)
	}
	s := trace.Sample{PPM: 10000, Seed: 1}
	var dst [2][][]trace.GapCount
	dst[0], dst[1] = make([][]trace.GapCount, 10), make([][]trace.GapCount, 10)
	var recs int64
	for b.Loop() {
		recs = 0
		r, c, err := trace.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		pr := r.(trace.PartitionedReader)
		n, _ := trace.PartitionsOf(pr.Partitioning(), trace.Sample{}, s)
		pr.SelectPartitions(n)
		gw, err := trace.NewGroupWalker(pr, s, 10, 12, class, r.Header().Windows)
		if err != nil {
			b.Fatal(err)
		}
		for {
			first, nw, err := pr.NextSegment()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			for w := first; w < first+nw; w++ {
				if err := gw.Window(w); err != nil {
					b.Fatal(err)
				}
				for g := range 10 {
					dst[0][g], dst[1][g] = dst[0][g][:0], dst[1][g][:0]
				}
				gw.Drain(true, dst[0])
				for _, a := range gw.Accessed {
					recs += a
				}
				gw.Drain(false, dst[1])
			}
		}
		c.Close()
	}
	b.ReportMetric(float64(recs), "accesses")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(recs), "ns/access")
}
