package verify

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"mdk/gen"
	"mdk/mpc"
	"mdk/result"
	"mdk/trace"
)

// TestSampleCoverage prints, for each sampling rate, policy and metric, the
// share of default-grid settings whose exact value lies within the bound
// the sampled run prints, over every gen model's default trace and the
// real traces of importer/testdata (docs/bench.md, "Sampled curves"). A
// bound of 0 on a wrong value counts as a miss; a metric printed without a
// bound is "-". It runs only with MDK_SAMPLE_TABLE=1:
//
//	MDK_SAMPLE_TABLE=1 go test ./verify -run TestSampleCoverage -v
func TestSampleCoverage(t *testing.T) {
	if os.Getenv("MDK_SAMPLE_TABLE") == "" {
		t.Skip("set MDK_SAMPLE_TABLE=1 to print the table")
	}
	var trs []*trace.Trace
	for _, m := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model = m
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		trs = append(trs, tr)
	}
	for _, rt := range realTraces(t) {
		trs = append(trs, rt.tr)
	}
	type cell struct{ in, printed, zero, all int }
	rates := []int64{100000, 10000, 1000}
	cov := map[int64]map[string][]cell{}
	var policies []string
	for _, ppm := range rates {
		cov[ppm] = map[string][]cell{}
	}
	for _, tr := range trs {
		ss := defaultSettings(tr.Header.Window)
		exact, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ppm := range rates {
			est, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{Sample: trace.Sample{PPM: ppm, Seed: 1}})
			if err != nil {
				t.Fatal(err)
			}
			for i := range ss {
				p := exact[i].Policy
				cs := cov[ppm][p]
				if cs == nil {
					cs = make([]cell, len(result.Metrics))
					cov[ppm][p] = cs
					if ppm == rates[0] && !strings.Contains(strings.Join(policies, " "), p) {
						policies = append(policies, p)
					}
				}
				for mi, m := range result.Metrics {
					c := &cs[mi]
					c.all++
					b, ok := est[i].PrintedBound(m)
					if !ok {
						continue
					}
					c.printed++
					d := math.Abs(m.Value(est[i]) - m.Value(exact[i]))
					if d <= b {
						c.in++
					} else if b == 0 {
						c.zero++
					}
				}
			}
		}
	}
	var head []string
	for _, m := range result.Metrics {
		head = append(head, m.Name)
	}
	fmt.Printf("| rate | policy | %s |\n|---|---|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, ppm := range rates {
		for _, p := range policies {
			var row []string
			for _, c := range cov[ppm][p] {
				switch {
				case c.printed == 0:
					row = append(row, "-")
				case c.zero > 0:
					row = append(row, fmt.Sprintf("%d%% (%d ±0)", 100*c.in/c.printed, c.zero))
				default:
					row = append(row, fmt.Sprintf("%d%%", 100*c.in/c.printed))
				}
			}
			fmt.Printf("| %s | %s | %s |\n", trace.FormatPPM(ppm), p, strings.Join(row, " | "))
		}
	}
}
