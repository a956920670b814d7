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
	hcov := map[int64]map[string]*hcell{}
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
			headroomCoverage(hcov, ppm, exact, est)
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
	printHeadroomCoverage(hcov, rates, policies)
}

// hcell counts a policy's headroom estimates at one rate: all of them,
// those printed with a bound (not 0), and those whose bound covers the
// exact headroom.
type hcell struct{ all, printed, in int }

// headroomCoverage adds the headroom against OPP of each policy's best
// setting at each default target (max_pr), on the sample and exactly, to
// hcov[ppm]: the headroom bound of mpc's table covers the exact headroom
// when |estimate - exact| <= bound (the settings chosen may differ: that
// is part of the estimate's error).
func headroomCoverage(hcov map[int64]map[string]*hcell, ppm int64, exact, est []*result.Result) {
	if hcov[ppm] == nil {
		hcov[ppm] = map[string]*hcell{}
	}
	ex := result.Choose(exact, result.MaxPR, result.DefaultTargets)
	for i, c := range result.Choose(est, result.MaxPR, result.DefaultTargets) {
		x := ex[i]
		if !c.HasHeadroom || !x.HasHeadroom || c.Policy == "opp" {
			continue
		}
		h := hcov[ppm][c.Policy]
		if h == nil {
			h = &hcell{}
			hcov[ppm][c.Policy] = h
		}
		h.all++
		if c.HeadroomErr > 0 {
			h.printed++
			if math.Abs(c.Headroom-x.Headroom) <= c.HeadroomErr {
				h.in++
			}
		}
	}
}

// printHeadroomCoverage prints hcov as a table.
func printHeadroomCoverage(hcov map[int64]map[string]*hcell, rates []int64, policies []string) {
	fmt.Printf("\nheadroom vs opp (max_pr, default targets):\n| rate | policy | covered / printed (not ±0) / all |\n|---|---|---|\n")
	for _, ppm := range rates {
		for _, p := range policies {
			if h := hcov[ppm][p]; h != nil && h.printed > 0 {
				fmt.Printf("| %s | %s | %d%% (%d / %d / %d) |\n", trace.FormatPPM(ppm), p, 100*h.in/h.printed, h.in, h.printed, h.all)
			} else if h != nil {
				fmt.Printf("| %s | %s | - (0 / 0 / %d) |\n", trace.FormatPPM(ppm), p, h.all)
			}
		}
	}
}
