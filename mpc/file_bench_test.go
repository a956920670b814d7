package mpc

import (
	"context"
	"os"
	"testing"

	"mdk/policy"
	"mdk/trace"
)

// BenchmarkGenerateFile runs the generator end to end (binary decoding
// included) on the trace in $MDK_BENCH_TRACE with every policy's default
// grid padded to 50 settings each, pace 10x10 (benchSettings). See docs/bench.md.
func BenchmarkGenerateFile(b *testing.B) {
	path := os.Getenv("MDK_BENCH_TRACE")
	if path == "" {
		b.Skip("set MDK_BENCH_TRACE to a trace file (docs/bench.md)")
	}
	var recs int64
	var ss []policy.Setting
	for b.Loop() {
		r, c, err := trace.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if ss == nil {
			ss = benchSettings(r.Header())
		}
		rs, err := Generate(context.Background(), r, ss, Options{})
		c.Close()
		if err != nil {
			b.Fatal(err)
		}
		recs = 0
		for _, a := range rs[0].Accessed {
			recs += a
		}
	}
	b.ReportMetric(float64(recs)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(recs), "records")
	b.ReportMetric(float64(len(ss)), "settings")
}
