package mpc

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// filterTrace builds, with a trace.Builder, the trace of tr's pages that
// keep accepts: an implementation of sampling independent of
// trace.SampleSplit.
func filterTrace(tr *trace.Trace, keep func(trace.Page) bool) *trace.Trace {
	h := tr.Header
	h.Windows = len(tr.Windows)
	b := trace.NewBuilder(h)
	for w, win := range tr.Windows {
		for k, ids := range [][]uint32{win.Accessed, win.Born, win.Freed} {
			for _, id := range ids {
				if p := tr.Pages[id]; keep(p) {
					b.Add(w, trace.Kind(k), p)
				}
			}
		}
	}
	return b.Trace()
}

// scaledSim is the simulator's result for s on tr with every count
// multiplied by n.
func scaledSim(tr *trace.Trace, s policy.Setting, n int64) *result.Result {
	r := sim.Run(tr, s)
	r.Saved *= n
	r.Alive *= n
	for _, v := range [][]int64{r.Promotions, r.Accessed, r.SavedPerWindow, r.AlivePerWindow} {
		for i := range v {
			v[i] *= n
		}
	}
	return r
}

// sampledSim is the simulator's estimate for s on a sample tr of rate 1/n:
// its result with every count multiplied by n, and for OPP its result on tr
// with every page replicated n times (its budgets taken on n times the
// sample's accessed counts, each of its gaps n gaps of the whole trace:
// the estimator of docs/bench.md, without flooring the sample's budgets).
func sampledSim(tr *trace.Trace, s policy.Setting, n int64) *result.Result {
	if _, ok := s.(policy.OPP); !ok || n == 1 {
		return scaledSim(tr, s, n)
	}
	h := tr.Header
	h.Windows = len(tr.Windows)
	b := trace.NewBuilder(h)
	for w, win := range tr.Windows {
		for k, ids := range [][]uint32{win.Accessed, win.Born, win.Freed} {
			for _, id := range ids {
				for c := range uint64(n) {
					b.Add(w, trace.Kind(k), trace.Page{Page: uint64(id)*uint64(n) + c})
				}
			}
		}
	}
	return sim.Run(b.Trace(), s)
}

// sameResults reports whether a and b hold the same integers, sub-samples
// included (cmp.Diff is slow on results that share slices).
func sameResults(a, b []*result.Result) bool {
	return slices.EqualFunc(a, b, func(x, y *result.Result) bool {
		return x.Policy == y.Policy && x.Params == y.Params && x.Saved == y.Saved && x.Alive == y.Alive &&
			x.PageSize == y.PageSize && x.SamplePPM == y.SamplePPM &&
			x.TotalsOnly == y.TotalsOnly && x.PromotionTotal == y.PromotionTotal &&
			slices.Equal(x.Promotions, y.Promotions) && slices.Equal(x.Accessed, y.Accessed) &&
			slices.Equal(x.SavedPerWindow, y.SavedPerWindow) && slices.Equal(x.AlivePerWindow, y.AlivePerWindow) &&
			sameResults(x.Groups, y.Groups)
	})
}

// unsampled returns r without its sample fields.
func unsampled(r *result.Result) *result.Result {
	c := *r
	c.SamplePPM, c.Groups, c.SamplePages = 0, nil, 0
	return &c
}

// TestSampledEqualsSimulator: a sampled run equals the simulator on the
// sampled pages (built independently, by a Builder), counts times 1/rate,
// and each sub-sample's run equals the simulator on its pages, counts times
// k/rate; OPP's equal the simulator on those pages each replicated 1/rate
// (k/rate) times (sampledSim); on random traces and every gen model. With
// Options.GroupTotals the sample's results are the same and each
// sub-sample's the simulator's totals.
func TestSampledEqualsSimulator(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 17))
	ss := edgeSettings()
	var trs []*trace.Trace
	for range testutil.Count(150) {
		trs = append(trs, testutil.RandomTrace(rng))
	}
	for _, m := range []string{"zipf", "scan", "phases", "churn", "mix"} {
		trs = append(trs, smallGen(t, m, 3))
	}
	for i, tr := range trs {
		s := trace.Sample{PPM: []int64{500000, 250000, 200000}[i%3], Seed: rng.Uint64()}
		k := 2 + i%3
		name := fmt.Sprintf("trace %d, sample %v, %d groups", i, s, k)
		got, err := Generate(context.Background(), tr.NewReader(), ss, Options{Sample: s, Groups: k})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tot, err := Generate(context.Background(), tr.NewReader(), ss, Options{Sample: s, Groups: k, GroupTotals: true})
		if err != nil {
			t.Fatalf("%s, GroupTotals: %v", name, err)
		}
		sample := filterTrace(tr, s.Keep)
		groups := make([]*trace.Trace, k)
		for g := range groups {
			groups[g] = filterTrace(tr, func(p trace.Page) bool { return s.Keep(p) && s.Group(p, k) == g })
		}
		for j, st := range ss {
			if got[j].SamplePPM != s.PPM || len(got[j].Groups) != k {
				t.Fatalf("%s, %s: SamplePPM %d, %d groups", name, policy.String(st), got[j].SamplePPM, len(got[j].Groups))
			}
			want := sampledSim(sample, st, s.Scale())
			if d := cmp.Diff(want, unsampled(got[j]), cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("%s, %s: sampled run differs from the simulator on the sample (-sim +mpc):\n%s", name, policy.String(st), d)
			}
			for g := range k {
				want := sampledSim(groups[g], st, s.Scale()*int64(k))
				if d := cmp.Diff(want, got[j].Groups[g], cmpopts.EquateEmpty()); d != "" {
					t.Fatalf("%s, %s, group %d: differs from the simulator on the group (-sim +mpc):\n%s", name, policy.String(st), g, d)
				}
				// With GroupTotals, its totals only.
				want.TotalsOnly, want.PromotionTotal = true, want.TotalPromotions()
				want.Promotions, want.SavedPerWindow = nil, nil
				if d := cmp.Diff(want, tot[j].Groups[g], cmpopts.EquateEmpty()); d != "" {
					t.Fatalf("%s, %s, group %d, GroupTotals: differs from the simulator on the group (-sim +mpc):\n%s", name, policy.String(st), g, d)
				}
			}
			if d := cmp.Diff(unsampled(got[j]), unsampled(tot[j]), cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("%s, %s, GroupTotals: the sample's result differs (-without +with):\n%s", name, policy.String(st), d)
			}
		}
	}
}

// TestSampleAllIsExact: --sample 100% is the exact path, integer for
// integer, whatever the seed.
func TestSampleAllIsExact(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 5))
	ss := edgeSettings()
	for i := range testutil.Count(100) {
		tr := testutil.RandomTrace(rng)
		if i == 0 {
			tr = smallGen(t, "mix", 1)
		}
		exact, err := Generate(context.Background(), tr.NewReader(), ss, Options{})
		if err != nil {
			t.Fatal(err)
		}
		all, err := Generate(context.Background(), tr.NewReader(), ss, Options{Sample: trace.Sample{PPM: trace.SampleAll, Seed: rng.Uint64()}})
		if err != nil {
			t.Fatal(err)
		}
		if !sameResults(exact, all) {
			t.Fatalf("trace %d: 100%% sample differs from the exact run", i)
		}
	}
}

// TestSampledDeterministic: the same seed gives the same results, bounds
// included; a sampled trace (its header says so) gives what sampling the
// whole trace gives.
func TestSampledDeterministic(t *testing.T) {
	tr := smallGen(t, "mix", 2)
	ss := edgeSettings()
	s := trace.Sample{PPM: 100000, Seed: 42}
	run := func(r trace.Reader, o Options) []*result.Result {
		t.Helper()
		rs, err := Generate(context.Background(), r, ss, o)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	a := run(tr.NewReader(), Options{Sample: s})
	b := run(tr.NewReader(), Options{Sample: s})
	if !sameResults(a, b) {
		t.Fatal("two runs differ")
	}
	sr, err := trace.NewSampleReader(tr.NewReader(), s)
	if err != nil {
		t.Fatal(err)
	}
	sampled, err := trace.ReadAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	if sampled.Header.Sample != s {
		t.Fatalf("sampled trace's header: %v", sampled.Header.Sample)
	}
	if !sameResults(a, run(sampled.NewReader(), Options{})) {
		t.Fatal("the sampled trace differs from sampling the whole trace")
	}
	c := run(tr.NewReader(), Options{Sample: trace.Sample{PPM: 100000, Seed: 43}})
	if sameResults(a, c) {
		t.Fatal("seeds 42 and 43 give the same sample")
	}
	// A sample of the sampled trace must be a subset of it.
	if _, err := Generate(context.Background(), sampled.NewReader(), ss, Options{Sample: trace.Sample{PPM: 10000, Seed: 7}}); err == nil {
		t.Fatal("another seed on a sampled trace: no error")
	}
	nested := run(sampled.NewReader(), Options{Sample: trace.Sample{PPM: 10000, Seed: 42}})
	if !sameResults(run(tr.NewReader(), Options{Sample: trace.Sample{PPM: 10000, Seed: 42}}), nested) {
		t.Fatal("1% of the 10% trace differs from 1% of the whole")
	}
}
