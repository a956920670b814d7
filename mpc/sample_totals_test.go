package mpc

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// totalsSettings are edgeSettings, every default grid, and the
// engines that keep per-window tables in a flattened sub-sample too
// (idle-time lopp) or take gaps one by one (lopp, a plug-in-like scorer).
func totalsSettings() []policy.Setting {
	ss := edgeSettings()
	for _, p := range policy.DefaultPolicies {
		ss = append(ss, policy.DefaultGrid(p, trace.DefaultWindow)...)
	}
	ss = append(ss, idleSettings()...)
	for _, th := range []float64{0, 0.3, 0.5, 1} {
		ss = append(ss, policy.LOPP{Theta: th, Model: testutil.TieScorer{}})
	}
	return ss
}

// TestGroupTotalsPrintsTheSame: with Options.GroupTotals a sampled run's
// results are the same integers as without it, its sub-samples keep the
// same totals (saved and alive page-windows, promotions, per-window
// accessed and alive counts) and nothing per window, and so every number
// a sampled run prints is the same: every metric's printed bound, the CSV
// and JSON records (bounds included), every bound PrintedBound may print,
// and the best-setting choices with their headroom bounds; on random
// traces and every gen model, at rates from 50% to 1%, with 2 to 12
// sub-samples and the default, with histogram-only settings (the sample
// fed its sub-samples' histograms) and with gap-by-gap ones (lopp: the
// sample walked on its own).
func TestGroupTotalsPrintsTheSame(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 41))
	trs, big := sampleTraces(t, rng, 5, 9)
	trs = append(trs, big, big)
	// Histogram-only settings feed the whole sample from its
	// sub-samples' walks; with lopp's the sample is walked on its own.
	var hist []policy.Setting
	for _, p := range policy.DefaultPolicies {
		hist = append(hist, policy.DefaultGrid(p, trace.DefaultWindow)...)
	}
	hist = append(hist, edgeSettings()...)
	for i, tr := range trs {
		ss := totalsSettings()
		if i%2 == 0 {
			ss = hist
		}
		s := trace.Sample{PPM: []int64{500000, 250000, 100000, 50000, 10000}[i%5], Seed: rng.Uint64()}
		k := []int{0, 2, 3, 7, 12}[i%5]
		if i >= len(trs)-2 {
			s.PPM, k = 10000, 0 // the benchmark's rate, default sub-samples
			ss = [][]policy.Setting{totalsSettings(), hist}[i-(len(trs)-2)]
		}
		name := fmt.Sprintf("trace %d, sample %v, %d groups", i, s, k)
		run := func(totals bool) []*result.Result {
			rs, err := Generate(context.Background(), tr.NewReader(), ss, Options{Sample: s, Groups: k, GroupTotals: totals})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return rs
		}
		full, tot := run(false), run(true)
		checkTotals(t, name, full, tot)
	}
}

// checkTotals fails unless tot (a run with GroupTotals) holds what full
// (the same run without) prints.
func checkTotals(t *testing.T, name string, full, tot []*result.Result) {
	t.Helper()
	strip := func(rs []*result.Result) []*result.Result {
		out := make([]*result.Result, len(rs))
		for i, r := range rs {
			out[i] = unsampled(r)
		}
		return out
	}
	if !sameResults(strip(full), strip(tot)) {
		t.Fatalf("%s: the sample's results differ with GroupTotals", name)
	}
	for i, f := range full {
		x := tot[i]
		what := fmt.Sprintf("%s, %s:%s", name, f.Policy, f.Params)
		if x.SamplePPM != f.SamplePPM || x.SamplePages != f.SamplePages || len(x.Groups) != len(f.Groups) {
			t.Fatalf("%s: SamplePPM %d, %d pages, %d groups; want %d, %d, %d", what, x.SamplePPM, x.SamplePages, len(x.Groups), f.SamplePPM, f.SamplePages, len(f.Groups))
		}
		for g, fg := range f.Groups {
			xg := x.Groups[g]
			if !xg.TotalsOnly || xg.Promotions != nil || xg.SavedPerWindow != nil || len(xg.Groups) != 0 {
				t.Fatalf("%s, group %d: keeps more than its totals", what, g)
			}
			if xg.Policy != fg.Policy || xg.Params != fg.Params || xg.Saved != fg.Saved || xg.Alive != fg.Alive || xg.PageSize != fg.PageSize ||
				xg.TotalPromotions() != fg.TotalPromotions() || !slices.Equal(xg.Accessed, fg.Accessed) || !slices.Equal(xg.AlivePerWindow, fg.AlivePerWindow) {
				t.Fatalf("%s, group %d: totals S %d L %d promotions %d, want S %d L %d promotions %d", what, g, xg.Saved, xg.Alive, xg.TotalPromotions(), fg.Saved, fg.Alive, fg.TotalPromotions())
			}
		}
		for _, m := range result.Metrics {
			fb, fok := f.PrintedBound(m)
			xb, xok := x.PrintedBound(m)
			if fok != xok || math.Float64bits(fb) != math.Float64bits(xb) {
				t.Fatalf("%s, %s: printed bound %v (%v), want %v (%v)", what, m.Name, xb, xok, fb, fok)
			}
			if m.Name == "savings" || result.Bounded(f.Policy, m) {
				if a, b := x.Bound(m), f.Bound(m); math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("%s, %s: bound %v, want %v", what, m.Name, a, b)
				}
			}
		}
	}
	var fc, xc, fj, xj bytes.Buffer
	if err := result.WriteCSV(&fc, full); err != nil {
		t.Fatal(err)
	}
	if err := result.WriteCSV(&xc, tot); err != nil {
		t.Fatal(err)
	}
	if err := result.WriteJSON(&fj, full, true); err != nil {
		t.Fatal(err)
	}
	if err := result.WriteJSON(&xj, tot, true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fc.Bytes(), xc.Bytes()) || !bytes.Equal(fj.Bytes(), xj.Bytes()) {
		t.Fatalf("%s: CSV or JSON differs with GroupTotals", name)
	}
	for _, st := range result.Stats {
		fcs, xcs := result.Choose(full, st, result.DefaultTargets), result.Choose(tot, st, result.DefaultTargets)
		if len(fcs) != len(xcs) {
			t.Fatalf("%s: %d choices, want %d", name, len(xcs), len(fcs))
		}
		for j, c := range fcs {
			d := xcs[j]
			if (c.Best == nil) != (d.Best == nil) || c.Best != nil && (c.Best.Params != d.Best.Params || c.Best.Policy != d.Best.Policy) ||
				math.Float64bits(c.Headroom) != math.Float64bits(d.Headroom) || math.Float64bits(c.HeadroomErr) != math.Float64bits(d.HeadroomErr) {
				t.Fatalf("%s, %s: choice %d differs with GroupTotals", name, st, j)
			}
		}
	}
}
