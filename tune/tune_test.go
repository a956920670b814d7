package tune

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/gbdt"
	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/lopp"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/tier"
	"mdk/trace"
)

// randomHalf fills windows off..off+h-1 of b with a random workload over n
// pages, drawn from a generator seeded with seed: per-page access
// probabilities from hot to cold, some births, some frees mid-way (so pages
// start new lives), and every page freed in the last window. Called twice
// with the same seed and offsets 0 and h, it writes a trace whose second half
// repeats its first: every life ends by window h-1, so the second half starts
// from the same empty state and sees the same lives, gaps and |A_w|.
func randomHalf(b *trace.Builder, seed uint64, off, h, n int) {
	rng := testutil.Rand(seed)
	probs := make([]float64, n)
	for i := range probs {
		probs[i] = []float64{0.9, 0.5, 0.2, 0.05}[rng.IntN(4)]
	}
	for w := range h {
		for i, p := range probs {
			pg := trace.Page{Page: uint64(i)}
			switch {
			case rng.Float64() < p:
				b.Add(off+w, trace.Access, pg)
			case rng.Float64() < 0.01:
				b.Add(off+w, trace.Birth, pg)
			}
			if rng.Float64() < 0.005 || w == h-1 {
				b.Add(off+w, trace.Free, pg)
			}
		}
	}
}

// copyTrace returns a trace of 2h windows whose second half is a copy of its
// first (see randomHalf).
func copyTrace(seed uint64, h, n int) *trace.Trace {
	b := trace.NewBuilder(trace.DefaultHeader())
	randomHalf(b, seed, 0, h, n)
	randomHalf(b, seed, h, h, n)
	return b.Trace()
}

func mustSLO(t *testing.T, s string) SLO {
	t.Helper()
	slo, err := ParseSLO(s)
	if err != nil {
		t.Fatal(err)
	}
	return slo
}

// TestCopyHalves is the sanity property of issue 7: when the evaluation part
// is a copy of the training part, every tuned setting does on it exactly
// what it did on the training part, and a max_pr SLO met on training is
// broken in no evaluation window.
func TestCopyHalves(t *testing.T) {
	seed := testutil.Seed(t, 7)
	tr := copyTrace(seed, 40, 300)
	for _, s := range []string{"max_pr<=2%", "max_pr<=0.5%", "p99_pr<=1%", "p98_pr<=3%", "mean_pr<=0.2%"} {
		t.Run(s, func(t *testing.T) {
			slo := mustSLO(t, s)
			rep, err := Run(context.Background(), Config{SLO: slo, Traces: []Input{{Name: "copy", Reader: tr.NewReader()}}})
			if err != nil {
				t.Fatal(err)
			}
			want := Part{Windows: 40, Segments: []Segment{{Trace: "copy", First: 0, Last: 39, TraceWindows: 80}}}
			if d := cmp.Diff(want, rep.Train); d != "" {
				t.Errorf("train part (-want +got):\n%s", d)
			}
			want.Segments[0].First, want.Segments[0].Last = 40, 79
			if d := cmp.Diff(want, rep.Eval); d != "" {
				t.Errorf("eval part (-want +got):\n%s", d)
			}
			saving := false
			for _, c := range rep.Policies {
				if !c.Found {
					continue
				}
				saving = saving || c.Train.Savings > 0
				if d := cmp.Diff(c.Train, c.Eval); d != "" {
					t.Errorf("%s:%s: eval differs from train (-train +eval):\n%s", c.Policy, c.Params, d)
				}
				if slo.Stat == tier.StatAxis(result.MaxPR) && c.Eval.BrokenWindows != 0 {
					t.Errorf("%s:%s: %d eval windows break %s", c.Policy, c.Params, c.Eval.BrokenWindows, slo)
				}
				if !c.Eval.MeetsSLO {
					t.Errorf("%s:%s: eval breaks %s", c.Policy, c.Params, slo)
				}
			}
			if !saving {
				t.Errorf("no policy saved anything on training: the test trace is too tame")
			}
			if rep.OPP == nil || !rep.OPP.Eval.MeetsSLO {
				t.Errorf("OPP yardstick missing or breaking the SLO: %+v", rep.OPP)
			}
		})
	}
}

// TestCopyTraces checks the same property across traces: training on one
// trace and evaluating on an identical run.
func TestCopyTraces(t *testing.T) {
	seed := testutil.Seed(t, 8)
	b := trace.NewBuilder(trace.DefaultHeader())
	randomHalf(b, seed, 0, 50, 200)
	tr := b.Trace()
	rep, err := Run(context.Background(), Config{SLO: mustSLO(t, "max_pr<=1%"),
		Train: []Input{{Name: "run1", Reader: tr.NewReader()}},
		Eval:  []Input{{Name: "run2", Reader: tr.NewReader()}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Train.Segments[0].Trace != "run1" || rep.Eval.Segments[0].Trace != "run2" || rep.Eval.Windows != 50 {
		t.Errorf("parts: train %+v, eval %+v", rep.Train, rep.Eval)
	}
	for _, c := range rep.Policies {
		if c.Found && (c.Eval.BrokenWindows != 0 || c.Eval.Savings != c.Train.Savings) {
			t.Errorf("%s:%s: train %+v, eval %+v", c.Policy, c.Params, c.Train, c.Eval)
		}
	}
}

// TestAgainstSimulator recomputes a tuning by brute force with the
// reference simulator: every setting of the grid simulated on every trace,
// its train and eval metrics summed by hand from the per-window arrays, the
// best chosen by a plain loop. The window split is checked with a training
// range in the middle of a trace, so that evaluation pools the two pieces on
// either side; the trace split with two pooled training traces.
func TestAgainstSimulator(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 9))
	specs := []string{"age:A=0..12", "vmin:T=0..8", "pace:P=0..6|inf,A=0..6|20", "paw:P=0..10,wait=0|1|3", "opp:r=0..10%/0.5%", "lopp"}
	for iter := range 30 {
		b := trace.NewBuilder(trace.DefaultHeader())
		randomHalf(b, rng.Uint64(), 0, 20+rng.IntN(20), 20+rng.IntN(60))
		tr1 := b.Trace()
		b = trace.NewBuilder(trace.DefaultHeader())
		randomHalf(b, rng.Uint64(), 0, 20+rng.IntN(20), 20+rng.IntN(60))
		tr2 := b.Trace()
		slo := SLO{Stat: tier.StatAxis(result.Stats[rng.IntN(4)]), PPM: int64(rng.IntN(100_000))}
		// L-OPP's model: any model will do (its theta is chosen on the
		// validation windows, which the brute force checks); a small one
		// trained on tr1.
		d, err := lopp.Dataset(tr1.NewReader(), 100_000, lopp.All)
		if err != nil {
			t.Fatal(err)
		}
		x, y := d.Labelled()
		model, err := gbdt.Train(x, lopp.NumFeatures, y, gbdt.Config{Rounds: 3, MaxDepth: 3, LearningRate: 0.3, Lambda: 1, MinChildWeight: 1, Subsample: 1, MaxBins: 32, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}

		// Window split of tr1 with a middle training range: eval pools
		// the windows on both sides.
		W := len(tr1.Windows)
		first := 1 + rng.IntN(W/2)
		train := Range{first, first + rng.IntN(W-first-1)}
		rep, err := Run(context.Background(), Config{SLO: slo, Policies: specs, Model: model,
			Traces: []Input{{Name: "t1", Reader: tr1.NewReader()}}, TrainWindows: &train})
		if err != nil {
			t.Fatal(err)
		}
		// Validation windows: the last quarter of the training windows,
		// at least one.
		v := max(1, train.Len()/4)
		checkBrute(t, iter, rep, slo, specs, model, []segTrace{{tr1, train.First, train.Last + 1}},
			[]segTrace{{tr1, train.Last + 1 - v, train.Last + 1}},
			[]segTrace{{tr1, 0, train.First}, {tr1, train.Last + 1, W}})

		// Trace split: tr1 and tr2 train, tr2 evaluates.
		rep, err = Run(context.Background(), Config{SLO: slo, Policies: specs, Model: model,
			Train: []Input{{Name: "t1", Reader: tr1.NewReader()}, {Name: "t2", Reader: tr2.NewReader()}},
			Eval:  []Input{{Name: "t2", Reader: tr2.NewReader()}}})
		if err != nil {
			t.Fatal(err)
		}
		W1, W2 := len(tr1.Windows), len(tr2.Windows)
		checkBrute(t, iter, rep, slo, specs, model,
			[]segTrace{{tr1, 0, W1}, {tr2, 0, W2}},
			[]segTrace{{tr1, W1 - max(1, W1/4), W1}, {tr2, W2 - max(1, W2/4), W2}},
			[]segTrace{{tr2, 0, W2}})
		if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "t2 is both a train and an eval trace") {
			t.Errorf("warnings %q: want one about t2 in both parts", rep.Warnings)
		}
	}
}

type segTrace struct {
	t        *trace.Trace
	from, to int
}

// bruteMetrics simulates s on every segment's trace and sums its windows.
func bruteMetrics(s policy.Setting, slo SLO, segs []segTrace) *Metrics {
	var prs []float64
	m := &Metrics{}
	for _, sg := range segs {
		r := sim.Run(sg.t, s)
		for w := sg.from; w < sg.to; w++ {
			m.Windows++
			m.Promotions += r.Promotions[w]
			m.SavedPageWindows += r.SavedPerWindow[w]
			m.AlivePageWindows += r.AlivePerWindow[w]
			pr := 0.0
			if r.Accessed[w] > 0 {
				pr = float64(r.Promotions[w]) / float64(r.Accessed[w])
			}
			prs = append(prs, pr)
			if pr > slo.Bound() {
				m.BrokenWindows++
			}
		}
	}
	// The statistic of prs, computed here without result: sort for the
	// percentiles, plain loops for max and mean.
	m.Stat = statOf(prs, slo.Stat.Stat)
	if m.AlivePageWindows > 0 {
		m.Savings = float64(m.SavedPageWindows) / float64(m.AlivePageWindows)
	}
	m.MeetsSLO = m.Stat <= slo.Bound()
	return m
}

func statOf(prs []float64, st result.Stat) float64 {
	s := append([]float64(nil), prs...)
	// insertion sort: small slices, and independent of result's code
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	n := len(s)
	switch st {
	case result.MaxPR:
		return s[n-1]
	case result.P99PR, result.P98PR:
		q := 99
		if st == result.P98PR {
			q = 98
		}
		k := (q*n + 99) / 100
		return s[max(k, 1)-1]
	}
	sum := 0.0
	for _, x := range prs {
		sum += x
	}
	return sum / float64(n)
}

func checkBrute(t *testing.T, iter int, rep *Report, slo SLO, specs []string, model policy.Scorer, train, val, eval []segTrace) {
	t.Helper()
	var ss []policy.Setting
	for _, sp := range specs {
		s, err := policy.Parse(sp, trace.DefaultWindow)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s...)
	}
	if err := policy.AttachModel(ss, model); err != nil {
		t.Fatal(err)
	}
	byPolicy := map[string]*Choice{}
	for _, c := range rep.Policies {
		c := c
		byPolicy[c.Policy] = &c
	}
	bestOf := func(name string, segs []segTrace) (policy.Setting, *Metrics, int) {
		var bs policy.Setting
		var bm *Metrics
		n := 0
		for _, s := range ss {
			if s.Policy() != name {
				continue
			}
			n++
			m := bruteMetrics(s, slo, segs)
			if !m.MeetsSLO {
				continue
			}
			if bm == nil || m.Savings > bm.Savings || m.Savings == bm.Savings && m.Stat < bm.Stat {
				bs, bm = s, m
			}
		}
		return bs, bm, n
	}
	for _, name := range []string{"age", "vmin", "pace", "paw", "opp", "lopp"} {
		got := byPolicy[name]
		if got == nil {
			t.Fatalf("iter %d: no row for %s", iter, name)
		}
		// L-OPP is chosen on the validation windows.
		on, chosenOn := train, "train"
		if name == "lopp" {
			on, chosenOn = val, "validation"
		}
		s, m, n := bestOf(name, on)
		if name == "lopp" {
			// Of the settings meeting the SLO on train, the best on
			// validation.
			s, m, n = nil, nil, 0
			for _, x := range ss {
				if x.Policy() != name {
					continue
				}
				n++
				if !bruteMetrics(x, slo, train).MeetsSLO {
					continue
				}
				v := bruteMetrics(x, slo, val)
				if v.MeetsSLO && (m == nil || v.Savings > m.Savings || v.Savings == m.Savings && v.Stat < m.Stat) {
					s, m = x, v
				}
			}
		}
		want := Choice{Policy: name, Settings: n, ChosenOn: chosenOn}
		if s != nil {
			want.Found, want.Params, want.Train, want.Eval = true, s.Params(), m, bruteMetrics(s, slo, eval)
			if name == "lopp" {
				want.Validation, want.Train = m, bruteMetrics(s, slo, train)
			}
			// Drift: the statistics, each at least a hundredth of the
			// bound (or 1 ppm), differ by more than the default factor 2;
			// the windows listed are the broken ones.
			floor := max(slo.Bound()/100, 1e-6)
			a, b := max(m.Stat, floor), max(want.Eval.Stat, floor)
			drifts := a > 2*b || b > 2*a
			if (got.Drift != nil) != drifts {
				t.Fatalf("iter %d, %s, %s: train %v eval %v: drift %+v, want drift %v", iter, slo, name, want.Train.Stat, want.Eval.Stat, got.Drift, drifts)
			}
			if got.Drift != nil {
				n := 0
				for _, sg := range got.Drift.BrokeAt {
					n += sg.Windows()
				}
				if n != want.Eval.BrokenWindows || got.Drift.Worse != (b > a) {
					t.Fatalf("iter %d, %s, %s: drift %+v: want %d broken windows, worse %v", iter, slo, name, got.Drift, want.Eval.BrokenWindows, b > a)
				}
			}
		}
		got.OPPHeadroom, got.HasOPPHeadroom, got.Drift = 0, false, nil
		if d := cmp.Diff(&want, got); d != "" {
			t.Fatalf("iter %d, %s, %s: (-brute force +tune):\n%s", iter, slo, name, d)
		}
	}
	// The yardstick: OPP's default grid plus r at the bound, best on eval.
	var best *Metrics
	for _, s := range append(policy.DefaultGrid("opp", trace.DefaultWindow), policy.OPP{PPM: slo.PPM}) {
		m := bruteMetrics(s, slo, eval)
		if m.MeetsSLO && (best == nil || m.Savings > best.Savings || m.Savings == best.Savings && m.Stat < best.Stat) {
			best = m
		}
	}
	if (best == nil) != (rep.OPP == nil) || best != nil && !cmp.Equal(best, rep.OPP.Eval) {
		t.Fatalf("iter %d, %s: yardstick: brute force %+v, tune %+v", iter, slo, best, rep.OPP)
	}
}

// phaseConfig is the phase-change workload of docs/tune.md: the phases
// model with one phase per half. In the second half the working set moves
// to pages that were touched now and then in the first half (background
// accesses) and have been idle since, so a setting that reclaims idle pages
// quickly, safe on the first half, refaults them all at the phase change.
func phaseConfig() gen.Config {
	cfg := gen.DefaultConfig
	cfg.Model = "phases"
	cfg.Pages = 20000
	cfg.Windows = 120
	cfg.Phases.PhaseWindows = 60
	cfg.Phases.BackgroundProb = 0.002
	return cfg
}

func TestPhaseChange(t *testing.T) {
	slo := mustSLO(t, "max_pr<=2%")
	rep, err := Run(context.Background(), Config{SLO: slo, Policies: []string{"age", "vmin"},
		Traces: []Input{{Name: "phases", Reader: gen.NewReader(phaseConfig())}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Policies {
		if !c.Found {
			t.Fatalf("%s: no setting meets %s on the first half", c.Policy, slo)
		}
		if !c.Train.MeetsSLO || c.Train.BrokenWindows != 0 {
			t.Errorf("%s:%s: chosen but breaks the SLO on training: %+v", c.Policy, c.Params, c.Train)
		}
		if c.Eval.MeetsSLO || c.Eval.BrokenWindows == 0 {
			t.Errorf("%s:%s: the phase change should break %s on the second half: %+v", c.Policy, c.Params, slo, c.Eval)
		}
	}
	if rep.OPP == nil || rep.OPP.Eval.BrokenWindows != 0 || rep.OPP.Params != "r=2%" {
		t.Errorf("yardstick %+v: want opp r=2%% meeting the SLO in every window", rep.OPP)
	}
}

func TestRunErrors(t *testing.T) {
	tr := copyTrace(1, 3, 5)
	one := trace.NewBuilder(trace.DefaultHeader())
	one.Add(0, trace.Access, trace.Page{Page: 1})
	h := trace.DefaultHeader()
	h.Window = 10_000_000_000
	other := trace.NewBuilder(h)
	other.Add(0, trace.Access, trace.Page{Page: 1})
	in := func(name string, t *trace.Trace) []Input { return []Input{{Name: name, Reader: t.NewReader()}} }
	r := func(a, b int) *Range { return &Range{a, b} }
	slo := SLO{Stat: tier.StatAxis(result.MaxPR), PPM: 20000}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no traces", Config{SLO: slo}, "tune: no traces"},
		{"both", Config{SLO: slo, Traces: in("a", tr), Train: in("b", tr)}, "tune: give either traces to split by windows or train and eval traces, not both"},
		{"no eval", Config{SLO: slo, Train: in("b", tr)}, "tune: a trace split needs at least one train trace and one eval trace"},
		{"ranges with traces", Config{SLO: slo, Train: in("b", tr), Eval: in("c", tr), TrainWindows: r(0, 1)}, "tune: train or eval windows apply to a window split, not to train and eval traces"},
		{"bad stat", Config{SLO: SLO{Stat: tier.Axis{Stat: "max"}}, Traces: in("a", tr)}, `tune: unknown statistic "max" (known: max_pr, p99_pr, p98_pr, mean_pr)`},
		{"bad spec", Config{SLO: slo, Traces: in("a", tr), Policies: []string{"age:A=x"}}, `age:A=x: bad value "x" for A: want a number of windows or a duration such as 90s or 10m, or inf`},
		{"windows differ", Config{SLO: slo, Train: in("a", tr), Eval: in("b", other.Trace())}, "tune: b has 10s windows but a has 30s: tuning needs runs with one window length"},
		{"one window", Config{SLO: slo, Traces: in("one", one.Trace())}, "tune: one has 1 window(s): need at least 2 to split into train and eval halves"},
		{"train past end", Config{SLO: slo, Traces: in("a", tr), TrainWindows: r(0, 6)}, "tune: train windows 0..6 go past the end of a, which has 6 windows (0..5)"},
		{"eval past end", Config{SLO: slo, Traces: in("a", tr), EvalWindows: r(9, 9)}, "tune: eval windows 9..9 go past the end of a, which has 6 windows (0..5)"},
		{"train all", Config{SLO: slo, Traces: in("a", tr), TrainWindows: r(0, 5)}, "tune: train windows 0..5 cover all of a: no windows left to evaluate on (give eval windows)"},
		{"eval all", Config{SLO: slo, Traces: in("a", tr), EvalWindows: r(0, 5)}, "tune: eval windows 0..5 cover all of a: no windows left to train on (give train windows)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.cfg)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got error %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestWindowSplit(t *testing.T) {
	r := func(a, b int) *Range { return &Range{a, b} }
	for _, tc := range []struct {
		name        string
		w           int
		train, eval *Range
		wantTr      []Range
		wantEv      []Range
		overlap     *Range
	}{
		{"default even", 10, nil, nil, []Range{{0, 4}}, []Range{{5, 9}}, nil},
		{"default odd", 11, nil, nil, []Range{{0, 4}}, []Range{{5, 10}}, nil},
		{"default two", 2, nil, nil, []Range{{0, 0}}, []Range{{1, 1}}, nil},
		{"train prefix", 10, r(0, 2), nil, []Range{{0, 2}}, []Range{{3, 9}}, nil},
		{"train suffix", 10, r(7, 9), nil, []Range{{7, 9}}, []Range{{0, 6}}, nil},
		{"train middle", 10, r(3, 5), nil, []Range{{3, 5}}, []Range{{0, 2}, {6, 9}}, nil},
		{"eval middle", 10, nil, r(4, 4), []Range{{0, 3}, {5, 9}}, []Range{{4, 4}}, nil},
		{"both", 10, r(0, 3), r(6, 9), []Range{{0, 3}}, []Range{{6, 9}}, nil},
		{"overlap", 10, r(0, 6), r(5, 9), []Range{{0, 6}}, []Range{{5, 9}}, r(5, 6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, ev, ov, err := windowSplit("x", tc.w, tc.train, tc.eval)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff([]any{tc.wantTr, tc.wantEv, tc.overlap}, []any{tr, ev, ov}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
