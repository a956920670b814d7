package beam_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"mdk/fleet"
	fleetbeam "mdk/fleet/beam"
	"mdk/fleet/fleettest"
	"mdk/trace"
)

// BenchmarkPrism runs the pipeline on prism over 1 trace (the pipeline's
// fixed overhead) and over 56 (55 generated and a broken one).
func BenchmarkPrism(b *testing.B) {
	dir := b.TempDir()
	paths, err := fleettest.Write(dir, 55)
	if err != nil {
		b.Fatal(err)
	}
	cfg := fleet.Config{Policies: []string{"age:A=0..12/3", "vmin:T=0|2|5", "pace:P=2|inf,A=2|6", "opp:r=1%|5%"}, SLO: "max_pr<=2%", Window: trace.DefaultWindow}
	plan, _ := cfg.Compile()
	for _, n := range []int{1, len(paths)} {
		jobs := paths[:n]
		f, err := plan.RunLocal(b.Context(), jobs, fleet.OpenFile, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				p, s := beam.NewPipelineWithRoot()
				out := filepath.Join(dir, fmt.Sprintf("out-%d-%d", n, i))
				if err := fleetbeam.Build(s, cfg, jobs, out, 0); err != nil {
					b.Fatal(err)
				}
				if err := ptest.Run(p); err != nil {
					b.Fatal(err)
				}
				os.RemoveAll(out)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "traces/s")
			b.ReportMetric(float64(f.AccessRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
