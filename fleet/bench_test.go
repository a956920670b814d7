package fleet_test

import (
	"context"
	"testing"

	"mdk/fleet"
	"mdk/fleet/fleettest"
)

// BenchmarkLocal runs a fleet of 55 small generated traces (plus a broken
// one) on the goroutine pool, with an SLO.
func BenchmarkLocal(b *testing.B) {
	paths, err := fleettest.Write(b.TempDir(), 55)
	if err != nil {
		b.Fatal(err)
	}
	p := plan(b, "max_pr<=2%")
	var records int64
	b.ReportAllocs()
	for b.Loop() {
		f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 0)
		if err != nil {
			b.Fatal(err)
		}
		records = f.AccessRecords
	}
	b.ReportMetric(float64(len(paths))*float64(b.N)/b.Elapsed().Seconds(), "traces/s")
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
