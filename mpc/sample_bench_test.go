package mpc

import (
	"context"
	"os"
	"testing"

	"mdk/trace"
)

// BenchmarkGenerateFileSampled is BenchmarkGenerateFile on a 1% sample
// (MDK_BENCH_TRACE names the trace; skipped without it).
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
		if _, err := Generate(context.Background(), r, benchSettings(r.Header()), Options{Sample: trace.Sample{PPM: 10000, Seed: 1}}); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
