package fleet_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mdk/fleet"
	"mdk/fleet/fleettest"
	"mdk/gen"
	"mdk/trace"
)

// TestFleetCoverage prints the coverage of the bounds mdk fleet --sample
// prints (issue 25: each must cover the exact value for at least 90% of
// the settings, per policy and metric): the fleets are the traces of
// docs/bench.md's coverage table (every gen model's default trace and the
// six real traces of importer/testdata) in three fleets (the gen traces,
// the real ones of 30 s windows, DAMON's of 1 s), each run exactly and
// sampled at 10%, 1% and 0.1% with sample seeds 1 to 10,
// default policies, SLO max_pr<=2%. A setting's printed bound covers when
// |estimate - exact| <= bound; a cell is covered / printed / all, "-" when
// nothing is printed. It runs only with MDK_FLEET_COVERAGE=1:
//
//	MDK_FLEET_COVERAGE=1 go test ./fleet -run TestFleetCoverage -v -timeout 1h
func TestFleetCoverage(t *testing.T) {
	if os.Getenv("MDK_FLEET_COVERAGE") == "" {
		t.Skip("set MDK_FLEET_COVERAGE=1 to print the table")
	}
	dir := t.TempDir()
	byWindow := map[string][]string{} // the fleets: by window length, gen traces apart from real ones
	write := func(name string, tr *trace.Trace) {
		path := filepath.Join(dir, strings.NewReplacer(" ", "-", ",", "").Replace(name)+".mdkt")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w, err := trace.NewBinaryWriter(f, tr.Header)
		if err == nil {
			_, err = trace.Copy(w, tr.NewReader())
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		key := trace.FormatDuration(tr.Header.Window) + " " + strings.Fields(name)[0]
		if !strings.HasPrefix(name, "gen ") {
			key = trace.FormatDuration(tr.Header.Window) + " real"
		}
		byWindow[key] = append(byWindow[key], path)
	}
	for _, m := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model = m
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		write("gen "+m, tr)
	}
	real, err := fleettest.RealTraces()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range real {
		write(r.Name, r.Trace)
	}
	fleets := slices.Sorted(func(yield func(string) bool) {
		for w := range byWindow {
			if !yield(w) {
				return
			}
		}
	})
	const seeds = 10
	type cell struct{ in, printed, all int }
	cols := []string{"avg_saved_bytes", "train_avg_saved_bytes", "eval_avg_saved_bytes", "savings", "alive_savings", "single eval_avg_saved_bytes"}
	rates := []int64{100000, 10000, 1000}
	cov := map[int64]map[string][]cell{}
	var policies []string
	add := func(ppm int64, policy string, col int, est, exact float64, bound *float64) {
		if cov[ppm] == nil {
			cov[ppm] = map[string][]cell{}
		}
		if cov[ppm][policy] == nil {
			cov[ppm][policy] = make([]cell, len(cols))
			if !slices.Contains(policies, policy) {
				policies = append(policies, policy)
			}
		}
		c := &cov[ppm][policy][col]
		c.all++
		if bound == nil {
			return
		}
		c.printed++
		if math.Abs(est-exact) <= *bound {
			c.in++
		}
	}
	run := func(c fleet.Config, paths []string) *fleet.Fleet {
		p, err := c.Compile()
		if err != nil {
			t.Fatal(err)
		}
		f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 0)
		if err != nil {
			t.Fatal(err)
		}
		if f.Failed != 0 {
			t.Fatalf("%d jobs failed", f.Failed)
		}
		return f
	}
	for _, key := range fleets {
		paths := byWindow[key]
		w, err := time.ParseDuration(strings.Fields(key)[0])
		if err != nil {
			t.Fatal(err)
		}
		cfg := fleet.Config{SLO: "max_pr<=2%", Window: w}
		exact := run(cfg, paths)
		for _, ppm := range rates {
			for seed := uint64(1); seed <= seeds; seed++ {
				sc := cfg
				sc.SamplePPM, sc.SampleSeed = ppm, seed
				est := run(sc, paths)
				for i, s := range est.Settings {
					x := exact.Settings[i]
					if s.Policy != x.Policy || s.Params != x.Params {
						t.Fatalf("setting %d: %s:%s against %s:%s", i, s.Policy, s.Params, x.Policy, x.Params)
					}
					var e fleet.NumbersErr
					if s.Err != nil {
						e = *s.Err
					}
					add(ppm, s.Policy, 0, s.AvgSavedBytes, x.AvgSavedBytes, e.AvgSavedBytes)
					if s.Train != nil {
						var te, ee fleet.NumbersErr
						if s.Train.Err != nil {
							te = *s.Train.Err
						}
						if s.Eval.Err != nil {
							ee = *s.Eval.Err
						}
						add(ppm, s.Policy, 1, s.Train.AvgSavedBytes, x.Train.AvgSavedBytes, te.AvgSavedBytes)
						add(ppm, s.Policy, 2, s.Eval.AvgSavedBytes, x.Eval.AvgSavedBytes, ee.AvgSavedBytes)
					}
					add(ppm, s.Policy, 3, s.Savings, x.Savings, e.Savings)
					add(ppm, s.Policy, 4, s.AliveSavings, x.AliveSavings, e.AliveSavings)
				}
				// The single setting for all: its estimate against the exact
				// fleet's evaluation numbers of the same setting.
				for _, pr := range est.Policies {
					if pr.SingleParams == "" {
						continue
					}
					k := slices.IndexFunc(exact.Settings, func(s fleet.SettingRow) bool { return s.Policy == pr.Policy && s.Params == pr.SingleParams })
					var e fleet.NumbersErr
					if pr.Single.Err != nil {
						e = *pr.Single.Err
					}
					add(ppm, pr.Policy, 5, pr.Single.AvgSavedBytes, exact.Settings[k].Eval.AvgSavedBytes, e.AvgSavedBytes)
				}
			}
		}
	}
	t.Logf("fleets (by window length): %v", byWindow)
	fmt.Printf("| rate | policy | %s |\n|---|---|%s\n", strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, ppm := range rates {
		for _, p := range policies {
			var row []string
			for _, c := range cov[ppm][p] {
				if c.printed == 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, fmt.Sprintf("%d%% (%d/%d/%d)", 100*c.in/c.printed, c.in, c.printed, c.all))
			}
			fmt.Printf("| %s | %s | %s |\n", trace.FormatPPM(ppm), p, strings.Join(row, " | "))
		}
	}
}
