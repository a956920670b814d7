package verify

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"mdk/gen"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// TestSampleErrorTable prints the error of sampled curves against the exact
// ones (docs/bench.md, "Sampled curves") on every gen model's default trace
// and on the real traces of importer/testdata, at 10%, 1% and 0.1%. It runs
// only with MDK_SAMPLE_TABLE=1 (about a minute of CPU):
//
//	MDK_SAMPLE_TABLE=1 go test ./verify -run TestSampleErrorTable -v
func TestSampleErrorTable(t *testing.T) {
	if os.Getenv("MDK_SAMPLE_TABLE") == "" {
		t.Skip("set MDK_SAMPLE_TABLE=1 to print the table")
	}
	type named struct {
		name string
		tr   *trace.Trace
	}
	var trs []named
	for _, m := range []string{"zipf", "scan", "phases", "churn", "mix"} {
		cfg := gen.DefaultConfig
		cfg.Model = m
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, named{"gen " + m, tr})
	}
	for _, rt := range realTraces(t) {
		trs = append(trs, named{rt.name, rt.tr})
	}

	var settings []policy.Setting
	for _, name := range policy.DefaultPolicies {
		settings = append(settings, policy.DefaultGrid(name, trace.DefaultWindow)...)
	}
	fmt.Println("| trace | pages | rate | sampled pages | savings error, median / max (points) | savings within ± | max_pr error, median / max (points) | max_pr within ± | CPU exact / sampled |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, n := range trs {
		ss := settings
		if w := n.tr.Header.Window; w != trace.DefaultWindow {
			ss = nil
			for _, name := range policy.DefaultPolicies {
				ss = append(ss, policy.DefaultGrid(name, w)...)
			}
		}
		c0 := cpu()
		exact, err := mpc.Generate(context.Background(), n.tr.NewReader(), ss, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cExact := cpu() - c0
		for _, ppm := range []int64{100000, 10000, 1000} {
			s := trace.Sample{PPM: ppm, Seed: 1}
			kept := 0
			for _, p := range n.tr.Pages {
				if s.Keep(p) {
					kept++
				}
			}
			c0 := cpu()
			est, err := mpc.Generate(context.Background(), n.tr.NewReader(), ss, mpc.Options{Sample: s})
			if err != nil {
				t.Fatal(err)
			}
			cSample := cpu() - c0
			row := func(m result.Metric) (med, mx float64, within int) {
				var errs []float64
				for i := range ss {
					d := math.Abs(m.Value(est[i]) - m.Value(exact[i]))
					errs = append(errs, d)
					if d <= est[i].Bound(m) {
						within++
					}
				}
				slices.Sort(errs)
				return 100 * errs[len(errs)/2], 100 * errs[len(errs)-1], within
			}
			sav, _ := result.MetricByName("savings")
			mpr, _ := result.MetricByName("max_pr")
			sm, sx, sw := row(sav)
			mm, mx, mw := row(mpr)
			fmt.Printf("| %s | %d | %s | %d | %.2f / %.2f | %d%% | %.2f / %.2f | %d%% | %.2f s / %.2f s |\n",
				n.name, len(n.tr.Pages), trace.FormatPPM(ppm), kept, sm, sx, 100*sw/len(ss), mm, mx, 100*mw/len(ss),
				cExact.Seconds(), cSample.Seconds())
		}
	}
}
