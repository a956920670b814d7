package tune

import (
	"context"
	"fmt"
	"testing"

	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// BenchmarkRetune measures one retune of auto (the history trace built from
// the run's windows, the curve of paw's default grid on it by the one-pass
// generator, the choice) as a function of the history's length, on the mix
// model with 20,000 pages. records/retune is the history's event records;
// ns/record the cost per record.
//
//	go test ./tune -run '^$' -bench Retune -benchtime 10x
func BenchmarkRetune(b *testing.B) {
	tr := genTrace(b, "mix", 20000, 400, 1)
	for _, curve := range []string{"mpc", "sim"} {
		for _, h := range []int{10, 20, 60, 100, 200, 400} {
			if curve == "sim" && h != 10 {
				continue // the naive retune, for the ratio only
			}
			b.Run(fmt.Sprintf("%s/history=%d", curve, h), func(b *testing.B) {
				a, err := ParseAuto(fmt.Sprintf("auto:paw,slo=max_pr<=2%%,history=%d,every=1", h), tr.Header.Window)
				if err != nil {
					b.Fatal(err)
				}
				if curve == "sim" {
					a.Curve = simCurve
				}
				run := a.NewRun(tr.Header).(*AutoRun)
				for i := range h {
					run.keep(&tr.Windows[len(tr.Windows)-h+i])
				}
				records := 0
				for i := range run.hist {
					records += run.hist[i].Records()
				}
				b.ResetTimer()
				for b.Loop() {
					h, _ := run.history()
					rs, err := run.curve(h)
					if err != nil {
						b.Fatal(err)
					}
					run.cur, _ = a.choose(rs, run.cur)
				}
				b.ReportMetric(float64(records), "records/retune")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(records), "ns/record")
				_ = policy.SpecOf(run.cur)
			})
		}
	}
}

// simCurve is the history curve by the simulator, on the same history
// trace (for the benchmark's ratio; censored gaps are not taken out).
func simCurve(_ context.Context, h *trace.Trace, grid []policy.Setting) ([]*result.Result, error) {
	rs, err := sim.RunAll(context.Background(), h, grid, nil)
	return rs, err
}
