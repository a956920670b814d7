package mpc

import (
	"context"
	"testing"

	"mdk/gen"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// benchSettings is the benchmark's policy set: all five policies, about 50
// settings each (the default grids), pace 10x10.
func benchSettings(window trace.Header) []policy.Setting {
	var ss []policy.Setting
	for _, name := range []string{"age", "vmin", "opp", "paw", "pace"} {
		ss = append(ss, policy.DefaultGrid(name, window.Window)...)
	}
	return ss
}

func loadGen(b *testing.B, cfg gen.Config) *trace.Trace {
	b.Helper()
	t, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		b.Fatal(err)
	}
	return t
}

func accessRecords(t *trace.Trace) int64 {
	var n int64
	for i := range t.Windows {
		n += int64(len(t.Windows[i].Accessed))
	}
	return n
}

// BenchmarkGenerate measures the generator alone (the trace is in memory,
// so no decoding) on gen's default workload.
func BenchmarkGenerate(b *testing.B) {
	t := loadGen(b, gen.DefaultConfig)
	ss := benchSettings(t.Header)
	recs := accessRecords(t)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(context.Background(), t.NewReader(), ss, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(recs)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(len(ss)), "settings")
}

// BenchmarkSimulator measures the reference simulator on the same trace,
// per setting.
func BenchmarkSimulator(b *testing.B) {
	t := loadGen(b, gen.DefaultConfig)
	recs := accessRecords(t)
	s := policy.AGE{A: 10}
	for b.Loop() {
		sim.Run(t, s)
	}
	b.ReportMetric(float64(recs)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
