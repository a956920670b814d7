package gen_test

import (
	"errors"
	"io"
	"testing"

	"mdk/gen"
)

// BenchmarkGenerate generates each model's default trace, without writing it.
func BenchmarkGenerate(b *testing.B) {
	for _, m := range gen.Models {
		b.Run(m, func(b *testing.B) {
			cfg := gen.DefaultConfig
			cfg.Model = m
			var records int64
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				r := gen.NewReader(cfg)
				records = 0
				for {
					w, err := r.Read()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					records += int64(w.Records())
				}
			}
			if cpu := (cpuTime() - cpu0).Seconds(); cpu > 0 {
				b.ReportMetric(float64(records)*float64(b.N)/cpu, "records/cpu-s")
			}
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(records), "records/trace")
		})
	}
}
