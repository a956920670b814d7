package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"mdk/gbdt"
	"mdk/internal/outfile"
	"mdk/lopp"
	"mdk/policy"
	"mdk/trace"
	"mdk/tune"
)

func newLOPPCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lopp",
		Short: "Train L-OPP, the learned OPP policy",
		Long: `L-OPP scores each touch of a page from the life's last six prior reuse
distances with a gradient-boosted tree classifier trained to predict whether
OPP would reclaim the gap after it (docs/lopp.md). Train a model with
mdk lopp train, then use it with --model FILE in mdk sim, mpc, verify and
tune (policy spec lopp:theta=...).`,
		// A group of subcommands: cobra would print the help and succeed
		// on "mdk lopp bogus", so an unknown subcommand is refused here.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for \"mdk lopp\" (see mdk lopp --help)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newLOPPTrainCmd(e))
	return cmd
}

type loppTrainOptions struct {
	out     string
	rate    string
	windows string
	slo     string
	cfg     gbdt.Config
}

func newLOPPTrainCmd(e *env) *cobra.Command {
	o := loppTrainOptions{cfg: gbdt.DefaultConfig}
	cmd := &cobra.Command{
		Use:   "train TRACE -o MODEL.json",
		Short: "Train an L-OPP model on a trace's training windows",
		Long: `Train cuts the training windows into fit windows and validation windows
(the last quarter, at least one window). It labels every touch in the fit
windows with whether OPP at --rate reclaims the gap after it and trains the
classifier on the touches' features. Only the fit windows are read for
labels: a touch whose gap is still open at their end has no known label
(its next touch lies beyond them) and is left out, so nothing after them
leaks into the model. Then it runs lopp's default theta grid with the model
and reports the theta that meets --slo with the most savings on the
validation windows, which the model was not fitted on.

By default the training windows are the first half (floor(W/2) windows),
the same default split as mdk tune, whose lopp theta is chosen on the same
validation windows; evaluating the model with mdk tune --model on the same
trace is then on windows it has not seen.`,
		Example: `  mdk lopp train trace.mdkt -o model.json
  mdk lopp train trace.mdkt --train-windows 0..119 --rate 1% --rounds 50 -o model.json
  mdk mpc trace.mdkt -p lopp -p opp --model model.json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLOPPTrain(e, o, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.out, "output", "o", "", "model `FILE` to write (JSON; required)")
	fl.StringVar(&o.rate, "rate", "2%", "OPP's target `rate` for the labels")
	fl.StringVar(&o.windows, "train-windows", "", "training windows `FIRST..LAST` (inclusive; fit on the first three quarters); default: the first half")
	fl.StringVar(&o.slo, "slo", "", "SLO `STAT<=RATE` the reported theta meets on the validation windows; default: max_pr<= --rate")
	fl.IntVar(&o.cfg.Rounds, "rounds", o.cfg.Rounds, "boosting rounds (trees)")
	fl.IntVar(&o.cfg.MaxDepth, "depth", o.cfg.MaxDepth, "depth of each tree")
	fl.Float64Var(&o.cfg.LearningRate, "eta", o.cfg.LearningRate, "learning rate")
	fl.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "seed (row subsampling)")
	fl.Float64Var(&o.cfg.Subsample, "subsample", o.cfg.Subsample, "fraction of rows drawn per round")
	return cmd
}

func runLOPPTrain(e *env, o loppTrainOptions, path string) error {
	if o.out == "" {
		return usagef("lopp train needs -o MODEL.json")
	}
	if err := outfile.Check(o.out); err != nil {
		return err
	}
	ppm, err := policy.ParseRate(o.rate)
	if err != nil {
		return usagef("--rate: %v", err)
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError{err}
	}
	r, c, err := e.openTrace(path)
	if err != nil {
		return err
	}
	defer c.Close()
	sloText := o.slo
	if sloText == "" {
		sloText = "max_pr<=" + policy.FormatRate(ppm)
	}
	slo, err := tune.ParseSLO(sloText)
	if err != nil {
		return usagef("--slo: %v", err)
	}
	var rg tune.Range
	if o.windows != "" {
		if rg, err = tune.ParseRange(o.windows); err != nil {
			return usagef("--train-windows: %v", err)
		}
	} else {
		W := r.Header().Windows
		if W == 0 { // unknown until the end: read it all
			t, err := trace.ReadAll(r)
			if err != nil {
				return err
			}
			W, r = len(t.Windows), t.NewReader()
		}
		if W < 4 {
			return fmt.Errorf("%s has %d windows: need at least 4 (the first half to train on, cut into fit and validation windows)", path, W)
		}
		rg = tune.Range{First: 0, Last: W/2 - 1}
	}
	fit, val, ok := tune.ValidationSplit(rg)
	if !ok {
		return usagef("--train-windows %s: need at least 2 windows (fit and validation)", rg)
	}
	span := lopp.Span{From: fit.First, To: fit.Last + 1}
	d, err := lopp.Dataset(r, ppm, span)
	if err != nil {
		return err
	}
	x, y := d.Labelled()
	if len(y) == 0 {
		return fmt.Errorf("%s: no touch with a known label in fit windows %s", path, fit)
	}
	o.cfg.Progress = e.progressOf("lopp train", "round")
	m, err := gbdt.Train(x, lopp.NumFeatures, y, o.cfg)
	e.endProgress()
	if err != nil {
		return err
	}
	right := 0
	for i := range y {
		if (m.Score(x[i*lopp.NumFeatures:(i+1)*lopp.NumFeatures]) >= 0.5) == y[i] {
			right++
		}
	}
	// theta on the validation windows: a second pass over the trace.
	r2, c2, err := e.openTrace(path)
	if err != nil {
		return err
	}
	defer c2.Close()
	ss := policy.DefaultGrid("lopp", r2.Header().Window)
	if err := policy.AttachModel(ss, m); err != nil {
		return err
	}
	choice, err := tune.ChooseTheta(e.ctx, r2, ss, slo, rg, val)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := m.SaveFile(o.out); err != nil {
		return err
	}
	pos := 0
	for _, v := range y {
		if v {
			pos++
		}
	}
	fmt.Fprintf(e.stdout, "fitted on windows %s of %s: %d touches, %d labelled reclaimed by opp:r=%s, %d left out as censored (gap open at the end of the windows read)\n",
		fit, path, len(y), pos, policy.FormatRate(ppm), d.NumCensored())
	fmt.Fprintf(e.stdout, "training accuracy %.2f%% (%d trees of depth %d)\n",
		100*float64(right)/float64(len(y)), o.cfg.Rounds, o.cfg.MaxDepth)
	st := string(slo.Stat)
	if choice.Found {
		fmt.Fprintf(e.stdout, "theta chosen on validation windows %s (not fitted on): lopp:%s, %s %.2f%%, savings %.2f%% there (training windows %s: %s %.2f%%, savings %.2f%%; best of %d thetas meeting %s on both)\n",
			val, choice.Params, st, 100*choice.Validation.Stat, 100*choice.Validation.Savings,
			rg, st, 100*choice.Train.Stat, 100*choice.Train.Savings, choice.Settings, slo)
	} else {
		fmt.Fprintf(e.stdout, "no theta of %d meets %s on both the training windows %s and their validation windows %s\n", choice.Settings, slo, rg, val)
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", o.out)
	return nil
}
