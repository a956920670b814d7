package fleet_test

import (
	"bytes"
	"context"
	"math/big"
	"testing"

	"mdk/fleet"
	"mdk/fleet/fleettest"
	"mdk/mpc"
	"mdk/result"
	"mdk/trace"
)

func samplePlan(t *testing.T, ppm int64) *fleet.Plan {
	t.Helper()
	p, err := fleet.Config{Policies: specs, SLO: "max_pr<=5%", Window: trace.DefaultWindow,
		SamplePPM: ppm, SampleSeed: 7, SampleGroups: 5}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSampledFleetBounds: on sampled jobs each setting's fleet numbers have
// the random-group bound of the same fleet sums over each sub-sample,
// computed here from mpc's own sub-sample runs of every job; the groups'
// mean is the fleet's sum exactly (but for OPP); at 100% there are no bounds and the
// files equal the exact fleet's.
func TestSampledFleetBounds(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	paths = paths[:len(paths)-1] // not the broken one
	const ppm = 200_000
	p := samplePlan(t, ppm)
	f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Failed != 0 {
		t.Fatalf("%d jobs failed: %+v", f.Failed, f.JobResults)
	}
	// The sub-samples' fleet sums, from mpc directly.
	const k = 5
	saved := make([][k]*big.Rat, len(p.Settings))
	var fp [k]int64
	for i := range saved {
		for g := range k {
			saved[i][g] = new(big.Rat)
		}
	}
	for _, path := range paths {
		r, c, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := mpc.Generate(context.Background(), r, p.Settings, mpc.Options{Sample: trace.Sample{PPM: ppm, Seed: 7}, Groups: k})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		for g, gr := range runs[0].Groups {
			peak := int64(0)
			for _, a := range gr.AlivePerWindow {
				peak = max(peak, a)
			}
			fp[g] += peak * gr.PageSize
		}
		for i, run := range runs {
			for g, gr := range run.Groups {
				saved[i][g].Add(saved[i][g], big.NewRat(gr.Saved*gr.PageSize, int64(gr.Windows())))
			}
		}
	}
	nonzero := false
	for i, s := range f.Settings {
		avg, sav := make([]float64, k), make([]float64, k)
		mean := new(big.Rat)
		for g := range k {
			avg[g], _ = saved[i][g].Float64()
			sav[g], _ = new(big.Rat).Quo(saved[i][g], big.NewRat(fp[g], 1)).Float64()
			mean.Add(mean, saved[i][g])
		}
		mean.Quo(mean, big.NewRat(k, 1))
		// OPP's budgets are each sub-sample's own (its accessed counts), so
		// its groups do not add up to the whole sample's run.
		if m, _ := mean.Float64(); m != s.AvgSavedBytes && s.Policy != "opp" {
			t.Errorf("%s:%s: the groups' mean saved bytes %v, the fleet's %v", s.Policy, s.Params, m, s.AvgSavedBytes)
		}
		if s.Err == nil || s.Train == nil || s.Train.Err == nil || s.Eval.Err == nil {
			t.Fatalf("%s:%s: no bounds on a sampled fleet", s.Policy, s.Params)
		}
		// The average saved bytes get the groups' bound (none where it is
		// 0); the savings none, under the rule of docs/bench.md, though the
		// groups give one.
		// OPP's none (docs/bench.md, "The fleet's own coverage").
		switch w := result.GroupBound(ppm, avg); {
		case s.Policy == "opp":
			if s.Err.AvgSavedBytes != nil || s.Train.Err.AvgSavedBytes != nil || s.Eval.Err.AvgSavedBytes != nil {
				t.Errorf("%s:%s: an avg saved bytes bound is printed for OPP", s.Policy, s.Params)
			}
		case w > 0 && (s.Err.AvgSavedBytes == nil || *s.Err.AvgSavedBytes != w):
			t.Errorf("%s:%s: avg saved bytes bound %v, want %v", s.Policy, s.Params, s.Err.AvgSavedBytes, w)
		case w == 0 && s.Err.AvgSavedBytes != nil:
			t.Errorf("%s:%s: avg saved bytes bound %v printed, want none (±0)", s.Policy, s.Params, *s.Err.AvgSavedBytes)
		}
		if s.Err.Savings != nil || s.Err.AliveSavings != nil || s.Eval.Err.Savings != nil {
			t.Errorf("%s:%s: a savings bound is printed", s.Policy, s.Params)
		}
		nonzero = nonzero || s.Err.AvgSavedBytes != nil && result.GroupBound(ppm, sav) > 0
	}
	if !nonzero {
		t.Error("every avg saved bytes bound is 0")
	}
	files := func(f *fleet.Fleet) map[string][]byte {
		out := map[string][]byte{}
		if err := f.WriteFiles(func(name string, data []byte) error { out[name] = data; return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := files(f)
	if !bytes.Contains(got["settings.csv"], []byte(",eval_alive_savings_err\n")) || !bytes.Contains(got["fleet.json"], []byte(`"err": {`)) ||
		!bytes.Contains(got["summary.txt"], []byte("the savings and OPP's average saved bytes have none")) || bytes.Contains(got["summary.txt"], []byte("% ±")) {
		t.Errorf("sampled fleet files without bounds:\n%s\n%s", got["settings.csv"], got["summary.txt"])
	}

	// 100%: the exact fleet, byte for byte.
	all, err := samplePlan(t, 1_000_000).RunLocal(context.Background(), paths, fleet.OpenFile, 2)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := samplePlan(t, 0).RunLocal(context.Background(), paths, fleet.OpenFile, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, e := files(all), files(exact)
	for name := range e {
		if !bytes.Equal(a[name], e[name]) {
			t.Errorf("%s: --sample 100%% differs from the exact fleet", name)
		}
	}
}

// TestMergeMixedSample: merging a sampled job's accumulators with an
// unsampled job's (or another rate's) drops the sub-sample sums, in either
// order, so no bound is made of incomparable groups.
func TestMergeMixedSample(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	ps, pe := samplePlan(t, 200_000), samplePlan(t, 0)
	js, err := ps.RunJob(context.Background(), paths[0], fleet.OpenFile)
	if err != nil || js.Error != "" {
		t.Fatal(err, js.Error)
	}
	je, err := pe.RunJob(context.Background(), paths[1], fleet.OpenFile)
	if err != nil || je.Error != "" {
		t.Fatal(err, je.Error)
	}
	as, ae := ps.Accs(&js), pe.Accs(&je)
	if len(as[0].Whole.Groups) != 5 || as[0].SamplePPM != 200_000 {
		t.Fatalf("sampled job's accumulator: ppm %d, %d groups", as[0].SamplePPM, len(as[0].Whole.Groups))
	}
	for _, m := range []fleet.Acc{as[0].Merge(ae[0]), ae[0].Merge(as[0])} {
		if !m.SampleMixed || m.SamplePPM != 0 || m.Whole.Groups != nil || m.Eval.Groups != nil {
			t.Errorf("mixed merge kept groups: %+v", m)
		}
	}
	f := ps.Build(append(as, ae...), []fleet.JobResult{js, je})
	if f.Settings[0].Err != nil {
		t.Errorf("bounds on a fleet of mixed jobs: %+v", f.Settings[0].Err)
	}
}

// TestSampledFleetWarnsSmall: a job whose sample holds fewer than
// result.MinBoundPages pages gets a WARNING line naming it in the summary,
// as mdk mpc warns; a whole run has none.
func TestSampledFleetWarnsSmall(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	paths = paths[:len(paths)-1]
	for _, ppm := range []int64{100_000, 0} {
		p := samplePlan(t, ppm)
		f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 2)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := f.WriteSummary(&b); err != nil {
			t.Fatal(err)
		}
		n := bytes.Count(b.Bytes(), []byte("\nWARNING: "))
		if want := map[int64]int{100_000: len(paths), 0: 0}[ppm]; n != want || (want > 0 && !bytes.Contains(b.Bytes(), []byte(paths[0]+": the 10% sample holds only"))) {
			t.Errorf("rate %d ppm: %d WARNING lines, want %d:\n%s", ppm, n, want, b.String())
		}
	}
}
