package tune

import (
	"context"
	"strings"
	"testing"

	"mdk/gbdt"
	"mdk/gen"
	"mdk/lopp"
	"mdk/policy"
)

// loppModel fits a small L-OPP model on the fit windows of the default
// training half of cfg's trace, as mdk lopp train does: labels by OPP at 2%,
// censored touches left out.
func loppModel(t *testing.T, cfg gen.Config) policy.Scorer {
	t.Helper()
	fit, _, ok := ValidationSplit(Range{0, cfg.Windows/2 - 1})
	if !ok {
		t.Fatal("no fit windows")
	}
	d, err := lopp.Dataset(gen.NewReader(cfg), lopp.DefaultPPM, lopp.Span{From: fit.First, To: fit.Last + 1})
	if err != nil {
		t.Fatal(err)
	}
	x, y := d.Labelled()
	gc := gbdt.DefaultConfig
	gc.Rounds, gc.MaxDepth = 20, 4
	m, err := gbdt.Train(x, lopp.NumFeatures, y, gc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLOPPHoldsOnGenModels is issue 18's check: on every mdk gen model with
// default parameters (fewer pages and windows, to stay quick), and on the
// periodic scan of the issue, L-OPP tuned by Run meets the SLO on the
// evaluation windows, or its row says that no theta meets it on the
// validation windows. Before censoring and the validation split, the scan
// swept every 25 windows broke max_pr<=2% on every sweep (31.8%).
//
// Issue 26 adds every model at 20,000 pages and 240 windows (mdk gen's
// default length; skipped with -short). There the tuned L-OPP does not hold
// on phases: the working set's moves at windows 120 and 180, in the
// evaluation part, cost far more than any move in the training windows, and
// the theta chosen on validation (max_pr 0.23%) breaks the SLO on
// evaluation (30.71%, as age, chosen on train, does: 49.12%). docs/lopp.md names the failure; the
// case is marked breaks, and the test fails if it ever holds (so the docs
// get updated) as well as when any other case breaks.
func TestLOPPHoldsOnGenModels(t *testing.T) {
	type tc struct {
		name   string
		cfg    gen.Config
		breaks bool // known to break the SLO on eval (docs/lopp.md)
	}
	var cases []tc
	for _, m := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model, cfg.Pages, cfg.Windows = m, 3000, 120
		cases = append(cases, tc{m, cfg, false})
	}
	scan := gen.DefaultConfig
	scan.Model, scan.Pages, scan.Windows, scan.Seed = "scan", 4000, 200, 3
	scan.Scan.Period, scan.Scan.SweepWindows, scan.Scan.ArrayFraction = 25, 1, 0.3
	cases = append(cases, tc{"scan period 25", scan, false})
	if !testing.Short() {
		for _, m := range gen.Models {
			cfg := gen.DefaultConfig
			cfg.Model, cfg.Pages, cfg.Windows = m, 20000, 240
			cases = append(cases, tc{m + " 20k", cfg, m == "phases"})
		}
	}
	slo, err := ParseSLO("max_pr<=2%")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Config{SLO: slo, Policies: []string{"lopp"},
				Model: loppModel(t, c.cfg), Traces: []Input{{Name: c.name, Reader: gen.NewReader(c.cfg)}}})
			if err != nil {
				t.Fatal(err)
			}
			ch := rep.Policies[0]
			if ch.ChosenOn != "validation" || len(rep.Validation.Segments) != 1 {
				t.Fatalf("lopp chosen on %q, validation %v: want the validation windows", ch.ChosenOn, rep.Validation)
			}
			if v, want := rep.Validation.Segments[0], (Range{c.cfg.Windows/2 - c.cfg.Windows/8, c.cfg.Windows/2 - 1}); v.First != want.First || v.Last != want.Last {
				t.Errorf("validation windows %d..%d, want %s", v.First, v.Last, want)
			}
			var text strings.Builder
			if err := WriteText(&text, rep); err != nil {
				t.Fatal(err)
			}
			switch {
			case !ch.Found:
				if !strings.Contains(text.String(), "no theta meets it on both the train and the valid windows") {
					t.Errorf("no theta found, but the table does not say why:\n%s", text.String())
				}
			case c.breaks && ch.Eval.MeetsSLO:
				t.Errorf("lopp:%s meets %s on eval (%.4f), but docs/lopp.md says it breaks here: update them:\n%s",
					ch.Params, slo, ch.Eval.Stat, text.String())
			case !c.breaks && !ch.Eval.MeetsSLO:
				t.Errorf("lopp:%s meets %s on the validation windows (%.4f) but not on eval (%.4f):\n%s",
					ch.Params, slo, ch.Validation.Stat, ch.Eval.Stat, text.String())
			}
			t.Logf("%s: lopp:%s found %v, valid %s, eval %s", c.name, ch.Params, ch.Found, metricsString(ch.Validation), metricsString(ch.Eval))
		})
	}
}

func metricsString(m *Metrics) string {
	if m == nil {
		return "-"
	}
	return "max_pr " + pct(m.Stat) + " savings " + pct(m.Savings)
}
