package mpc

import (
	"context"
	"os"
	"testing"

	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// BenchmarkGenerateFile runs the generator end to end (binary decoding
// included) on the trace in $MDK_BENCH_TRACE with every policy's default
// grid (about 50 settings each, pace 10x10). See docs/bench.md.
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

// BenchmarkSimulatorFile runs the reference simulator on the first
// $MDK_BENCH_SIM_WINDOWS windows (default 24) of the same trace for 10
// settings, to measure the generator's advantage in one run.
func BenchmarkSimulatorFile(b *testing.B) {
	path := os.Getenv("MDK_BENCH_TRACE")
	if path == "" {
		b.Skip("set MDK_BENCH_TRACE to a trace file (docs/bench.md)")
	}
	r, c, err := trace.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	t, err := trace.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	var recs int64
	for i := range t.Windows {
		recs += int64(len(t.Windows[i].Accessed))
	}
	var ss []policy.Setting
	for a := range 10 {
		ss = append(ss, policy.AGE{A: a * 10})
	}
	for b.Loop() {
		for _, s := range ss {
			sim.Run(t, s)
		}
	}
	b.ReportMetric(float64(recs)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(recs), "records")
}
