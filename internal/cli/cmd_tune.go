package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"mdk/policy"
	"mdk/tune"
)

type tuneOptions struct {
	slo          string
	policies     []string
	trainWindows string
	evalWindows  string
	train, eval  []string
	json, csv    bool
	model        string
	tier         string
	drift        float64
	sample       sampleOptions
}

func newTuneCmd(e *env) *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune --slo 'STAT<=RATE' (TRACE... | --train TRACE... --eval TRACE...)",
		Short: "Tune each policy on training data and report what it does on evaluation data",
		Long: `Tune chooses, for each policy, the setting with the most savings whose
promotion-rate statistic meets the SLO on a training part of the data, then
reports what that setting does on an evaluation part it was not chosen on:
its savings, its statistic, how many windows exceed the SLO's bound, and
whether the statistic itself breaks the SLO. As a yardstick it reports OPP's
savings at the same SLO on the evaluation part, with OPP's best setting
chosen on the evaluation part itself (an oracle's optimum there, not a tuned
setting; on an SLO on the slowdown, OPP's grid goes up to r = 100% and it is a
reference, not a bound: docs/tiers.md).

The SLO is STAT<=RATE: STAT is max_pr, p99_pr, p98_pr or mean_pr, RATE a
percentage (2%) or a fraction (0.02). With --tier, STAT may also be slowdown
(stall seconds per second over the part) or max_slowdown (its worst
window), the tier model's estimate (docs/tiers.md): 'slowdown<=1%' chooses
the setting with the most savings that loses at most 1% of the time to
promotions on the training part, and judges it on the evaluation part.

Splits:
  TRACE...                  each trace is cut by windows: by default the first
                            floor(W/2) windows train and the rest evaluate;
                            --train-windows and --eval-windows take inclusive
                            ranges FIRST..LAST (0..119 is 120 windows); one
                            alone means the other is every other window
  --train T... --eval T...  whole traces (several runs of the same job);
                            repeat the flag or separate paths with commas

Every policy runs over every whole trace; a part's metrics count only its
windows, so the policy's state at a boundary is the one it really has there.
A part made of several pieces pools them: its statistic is over the union of
their windows, its savings are the sum of saved page-windows over the sum of
alive page-windows. The output says which windows of which traces were used
for what. docs/tune.md has the details and a worked example.

A policy given by name alone uses its default grid; with no --policy, every
policy is tuned over its default grid (lopp only with --model).
Every default grid ends with a setting that never costs a promotion, so
"none meets the SLO" only comes from a grid given by hand.

lopp's theta is chosen on the validation windows, the last quarter of each
training segment, not on the whole training part: its model must be fitted
on the training windows before them, as mdk lopp train does by default.

A row's note flags a setting that will not hold: its eval statistic and the
one it was chosen on differ by more than --drift-factor (default 2; both
statistics are taken at least a hundredth of the bound), with the eval
windows where it broke the SLO.
--json prints the report with stable snake_case keys.

A policy may also be a controller, -p 'auto:BASE,slo=STAT<=RATE,...', -p
gswap[:...], -p damos[:...] or -p senpai[:...] with --tier (docs/policies.md,
"Controllers"): it runs over every whole trace, retuning as it goes on the
windows seen so far, and is judged on the eval part like any setting, beside
the best fixed setting of its grid (auto's; age's default grid for gswap and
damos; lru's for senpai) chosen on train, the
best in hindsight (chosen on eval) and OPP, with its number of switches;
--csv prints that comparison as CSV (docs/tune.md, "Controllers").`,
		Example: `  mdk tune trace.mdkt --slo 'max_pr<=2%'
  mdk tune trace.mdkt --slo 'p99_pr<=1%' --train-windows 0..179 -p age -p 'pace:P=1..20,A=1..20'
  mdk tune trace.mdkt --tier zram --slo 'slowdown<=1%'
  mdk tune --train run1.mdkt,run2.mdkt --eval run3.mdkt --slo 'max_pr<=2%' --json
  mdk tune trace.mdkt --slo 'max_pr<=2%' -p paw -p 'auto:paw,slo=max_pr<=2%'`,
		Args: func(cmd *cobra.Command, args []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error { return runTune(e, o, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.slo, "slo", "", "service-level objective `STAT<=RATE`, such as 'max_pr<=2%' (required)")
	fl.StringArrayVarP(&o.policies, "policy", "p", nil, "policy `spec` (repeatable); none: every policy's default grid")
	fl.StringVar(&o.trainWindows, "train-windows", "", "training windows `FIRST..LAST` (inclusive) of each TRACE")
	fl.StringVar(&o.evalWindows, "eval-windows", "", "evaluation windows `FIRST..LAST` (inclusive) of each TRACE")
	fl.StringSliceVar(&o.train, "train", nil, "training `traces`, whole (repeatable or comma-separated)")
	fl.StringSliceVar(&o.eval, "eval", nil, "evaluation `traces`, whole (repeatable or comma-separated)")
	fl.BoolVar(&o.json, "json", false, "print the report as JSON")
	fl.BoolVar(&o.csv, "csv", false, "print the comparison of the auto controllers (-p auto:...) as CSV")
	fl.StringVar(&o.tier, "tier", "", tierUsage+": each chosen setting's on the training and evaluation parts")
	fl.Float64Var(&o.drift, "drift-factor", tune.DefaultDriftFactor, "flag a setting whose eval statistic and the one it was chosen on differ by more than this `factor` (0: never)")
	o.sample.addFlags(fl)
	fl.StringVar(&o.model, "model", "", "L-OPP model `FILE` for lopp settings; train it on the training windows only (mdk lopp train's default is the first half, as tune's)")
	return cmd
}

func runTune(e *env, o tuneOptions, args []string) (err error) {
	if o.slo == "" {
		return usagef("tune needs --slo, such as --slo 'max_pr<=2%%'")
	}
	slo, err := tune.ParseSLO(o.slo)
	if err != nil {
		return usagef("--slo: %v", err)
	}
	if o.drift < 0 || (o.drift > 0 && o.drift < 1) {
		return usagef("--drift-factor %g: want 0 (never flag) or at least 1", o.drift)
	}
	cfg := tune.Config{SLO: slo, Policies: o.policies, DriftFactor: o.drift}
	if cfg.Sample, cfg.Groups, err = o.sample.parse(); err != nil {
		return err
	}
	if o.drift == 0 {
		cfg.DriftFactor = -1
	}
	if cfg.Model, err = loadModel(o.model); err != nil {
		return err
	}
	tr, err := loadTier(o.tier)
	if err != nil {
		return err
	}
	if err := setSLOTier(&cfg.SLO, tr); err != nil {
		return err
	}
	cfg.Tier = tr
	byTrace := len(o.train) > 0 || len(o.eval) > 0
	switch {
	case byTrace && len(args) > 0:
		return usagef("give traces either as arguments (split by windows) or with --train and --eval, not both")
	case byTrace && (len(o.train) == 0 || len(o.eval) == 0):
		return usagef("--train and --eval go together: give at least one trace to each")
	case byTrace && (o.trainWindows != "" || o.evalWindows != ""):
		return usagef("--train-windows and --eval-windows split TRACE arguments; they do not apply to --train and --eval traces")
	case !byTrace && len(args) == 0:
		return usagef("tune needs a TRACE, or --train and --eval traces (see mdk tune --help)")
	}
	if err := parseWindowRanges(&cfg, o.trainWindows, o.evalWindows); err != nil {
		return err
	}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	open := func(paths []string) ([]tune.Input, error) {
		var ins []tune.Input
		for _, p := range paths {
			r, c, err := e.openTrace(p)
			if err != nil {
				return nil, err
			}
			closers = append(closers, c)
			ins = append(ins, tune.Input{Name: p, Reader: r})
		}
		return ins, nil
	}
	if cfg.Traces, err = open(args); err != nil {
		return err
	}
	if cfg.Train, err = open(o.train); err != nil {
		return err
	}
	if cfg.Eval, err = open(o.eval); err != nil {
		return err
	}
	if p := e.progress("tune"); p != nil {
		cfg.Progress = func(_ string, done, total int) { p(done, total) }
	}
	rep, err := tune.Run(e.ctx, cfg)
	e.endProgress()
	if err != nil {
		var se *policy.SpecError
		if errors.As(err, &se) {
			return usagef("--policy %v", err)
		}
		return err
	}
	for _, w := range rep.SmallSamples {
		fmt.Fprintf(e.stderr, "mdk: WARNING: %s\n", w)
	}
	if tr != nil {
		return writeTierTune(e, rep, tr, o.json)
	}
	if o.json {
		return tune.WriteJSON(e.stdout, rep)
	}
	if o.csv {
		return tune.WriteCompareCSV(e.stdout, rep)
	}
	return tune.WriteText(e.stdout, rep)
}

// parseWindowRanges sets cfg's training and evaluation windows from the
// --train-windows and --eval-windows flags ("" leaves one unset).
func parseWindowRanges(cfg *tune.Config, train, eval string) error {
	for _, f := range []struct {
		flag, s string
		dst     **tune.Range
	}{{"--train-windows", train, &cfg.TrainWindows}, {"--eval-windows", eval, &cfg.EvalWindows}} {
		if f.s == "" {
			continue
		}
		r, err := tune.ParseRange(f.s)
		if err != nil {
			return usagef("%s: %v", f.flag, err)
		}
		*f.dst = &r
	}
	return nil
}
