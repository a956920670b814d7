package mpc

import (
	"context"
	"os"
	"testing"

	"mdk/policy"
	"mdk/trace"
)

// BenchmarkGenerateFileSampled runs what `mdk mpc TRACE --sample 1%` runs:
// every policy's default grid (policy.ParseSpecs of no specs), a 1% sample
// of seed 1 with the default sub-samples keeping their totals only
// (Options.GroupTotals), on the trace in $MDK_BENCH_TRACE (skipped without
// it); on a partitioned trace whose first partitions are the sample, the
// partitions' pass (sampledPartitions). Not the printing of the results.
func BenchmarkGenerateFileSampled(b *testing.B) {
	path := os.Getenv("MDK_BENCH_TRACE")
	if path == "" {
		b.Skip("set MDK_BENCH_TRACE to a trace file")
	}
	for b.Loop() {
		r, c, err := trace.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ss, err := policy.ParseSpecs(nil, r.Header().Window, policy.SpecOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Generate(context.Background(), r, ss, Options{Sample: trace.Sample{PPM: 10000, Seed: 1}, GroupTotals: true}); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
