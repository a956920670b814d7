package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
	ration  bool
	idle    bool
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

--rate may list several label rates (--rate '2%|10%|25%|50%'): one model is
fitted per rate and the rate is chosen like theta, on the validation
windows: of the (rate, theta) pairs meeting --slo (default: max_pr<= the
smallest rate) on the training and validation windows, the one with the most
validation savings (ties: the lower statistic, then the rate listed first).
OPP at 2% rations its budget among touches with identical histories, so
labels at 2% are hard to learn; a looser rate labels whole classes of
touches, and theta then sets the volume (docs/lopp.md).

--ration also tries the per-window ration lopp:theta=0,q=Q, which reclaims
after each window at most Q times its accessed pages, the best scored touches
first, and chooses among the thetas and the rations by the same rule (the
model is the same: the ration is a setting, not part of the model file).

--idle trains an idle-time model instead: a seventh feature, the page's idle
time (capped at 64 windows), with rows at ages 0..4, 6, 8, 12, 16, 24, 32, 48
and 64 of every labelled gap that lasts that long, labelled by OPP's decision
while reclaiming then still saves. lopp:theta=T with such a model scores
the page at the end of every window of a gap and reclaims it at the first
score of at least T (docs/lopp.md, "Idle time").

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
	fl.StringVar(&o.rate, "rate", "2%", "OPP's target `rate` for the labels; a list (2%|10%|25%|50%) fits one model per rate and keeps the one whose theta saves most on the validation windows")
	fl.StringVar(&o.windows, "train-windows", "", "training windows `FIRST..LAST` (inclusive; fit on the first three quarters); default: the first half")
	fl.BoolVar(&o.ration, "ration", false, "also try the per-window rations lopp:theta=0,q=Q (0.1% to 50%) and choose among thetas and rations on the validation windows (docs/lopp.md)")
	fl.BoolVar(&o.idle, "idle", false, "train an idle-time model: the touch's features and the page's idle time, scored at every window of a gap (docs/lopp.md)")
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
	var ppms []int64
	for _, part := range strings.Split(o.rate, "|") {
		ppm, err := policy.ParseRate(strings.TrimSpace(part))
		if err != nil {
			return usagef("--rate: %v", err)
		}
		if slices.Contains(ppms, ppm) {
			return usagef("--rate: %s listed twice", policy.FormatRate(ppm))
		}
		ppms = append(ppms, ppm)
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError{err}
	}
	if o.idle && o.ration {
		return usagef("--idle and --ration: a ration of an idle-time model is not built")
	}
	r, c, err := e.openTrace(path)
	if err != nil {
		return err
	}
	defer c.Close()
	sloText := o.slo
	if sloText == "" {
		sloText = "max_pr<=" + policy.FormatRate(slices.Min(ppms))
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
		if rg, _, err = tune.DefaultWindowSplit(path, W); err != nil { // tune's default: the first half
			return err
		}
	}
	fit, val, ok := tune.ValidationSplit(rg)
	if !ok {
		return usagef("--train-windows %s: need at least 2 windows (fit and validation)", rg)
	}
	// One model per label rate, each with its theta chosen on the
	// validation windows; the pair with the most validation savings wins
	// (ties: the lower validation statistic, then the rate listed first).
	// Only the best model so far is kept.
	var (
		best       *gbdt.Model
		bestChoice tune.Choice
		bestPPM    int64
	)
	for i, ppm := range ppms {
		if i > 0 { // the first pass read r; every later one reads the trace again
			if r, c, err = e.openTrace(path); err != nil {
				return err
			}
			defer c.Close()
		}
		m, choice, err := loppTrainRate(e, o, path, r, ppm, slo, rg, fit, val, len(ppms) > 1)
		if err != nil {
			return err
		}
		if best == nil || choice.Found && (!bestChoice.Found || better(choice, bestChoice)) {
			// The first rate's model stands until a rate has a theta
			// meeting the SLO: with none, it is the one written.
			best, bestChoice, bestPPM = m, choice, ppm
		}
	}
	switch {
	case len(ppms) > 1 && !bestChoice.Found:
		fmt.Fprintf(e.stdout, "no label rate of %d has a theta meeting %s on both; writing the model of opp:r=%s\n", len(ppms), slo, policy.FormatRate(bestPPM))
	case len(ppms) > 1:
		fmt.Fprintf(e.stdout, "label rate chosen on validation windows %s: opp:r=%s, lopp:%s (savings %.2f%% there)\n",
			val, policy.FormatRate(bestPPM), bestChoice.Params, 100*bestChoice.Validation.Savings)
	}
	if err := best.SaveFile(o.out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", o.out)
	return nil
}

// idleAges lists lopp.IdleAges as "0,1,2,...".
func idleAges() string {
	var b strings.Builder
	for i, a := range lopp.IdleAges {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, a)
	}
	return b.String()
}

// better reports whether the validation metrics of a beat those of b:
// more savings, then a lower statistic.
func better(a, b tune.Choice) bool {
	if a.Validation.Savings != b.Validation.Savings {
		return a.Validation.Savings > b.Validation.Savings
	}
	return a.Validation.Stat < b.Validation.Stat
}

// loppTrainRate fits one model on the fit windows with labels by OPP at ppm
// and chooses its theta on the validation windows. With several rates each
// report line is prefixed by the rate.
func loppTrainRate(e *env, o loppTrainOptions, path string, r trace.Reader, ppm int64, slo tune.SLO, rg, fit, val tune.Range, several bool) (*gbdt.Model, tune.Choice, error) {
	what := "lopp train"
	if several {
		what += " rate " + policy.FormatRate(ppm)
	}
	o.cfg.Progress = e.progressOf(what, "round")
	train := lopp.Train
	if o.idle {
		train = lopp.TrainIdle
	}
	tm, err := train(r, ppm, lopp.Span{From: fit.First, To: fit.Last + 1}, o.cfg)
	e.endProgress()
	if errors.Is(err, lopp.ErrNoLabels) {
		return nil, tune.Choice{}, fmt.Errorf("%s: no touch with a known label in fit windows %s", path, fit)
	} else if err != nil {
		return nil, tune.Choice{}, err
	}
	m := tm.Model
	// theta on the validation windows: a second pass over the trace.
	r2, c2, err := e.openTrace(path)
	if err != nil {
		return nil, tune.Choice{}, err
	}
	defer c2.Close()
	ss := policy.DefaultGrid("lopp", r2.Header().Window)
	kind := "thetas"
	if o.ration {
		ss = append(ss, policy.RationGrid()...)
		kind = "thetas and rations"
	}
	if err := policy.AttachModel(ss, m); err != nil {
		return nil, tune.Choice{}, err
	}
	choice, err := tune.ChooseTheta(e.ctx, r2, ss, slo, rg, val)
	if err != nil {
		return nil, tune.Choice{}, fmt.Errorf("%s: %w", path, err)
	}
	pre := ""
	if several {
		pre = "rate " + policy.FormatRate(ppm) + ": "
	}
	fmt.Fprintf(e.stdout, "%sfitted on windows %s of %s: %d touches, %d labelled reclaimed by opp:r=%s, %d left out as censored (gap open at the end of the windows read)\n",
		pre, fit, path, tm.Rows, tm.Positives, policy.FormatRate(ppm), tm.Censored)
	if o.idle {
		fmt.Fprintf(e.stdout, "%sidle-time rows: %d (ages %s of the labelled gaps lasting that long), %d labelled reclaim-now\n", pre, tm.IdleRows, idleAges(), tm.IdlePositives)
	}
	fmt.Fprintf(e.stdout, "%straining accuracy %.2f%% (%d trees of depth %d)\n",
		pre, 100*tm.Accuracy(), o.cfg.Rounds, o.cfg.MaxDepth)
	st := slo.Stat.String()
	if choice.Found {
		fmt.Fprintf(e.stdout, "%stheta chosen on validation windows %s (not fitted on): lopp:%s, %s %.2f%%, savings %.2f%% there (training windows %s: %s %.2f%%, savings %.2f%%; best of %d %s meeting %s on both)\n",
			pre, val, choice.Params, st, 100*choice.Validation.Stat, 100*choice.Validation.Savings,
			rg, st, 100*choice.Train.Stat, 100*choice.Train.Savings, choice.Settings, kind, slo)
	} else {
		what := "theta"
		if o.ration {
			what = "setting (theta or ration)"
		}
		fmt.Fprintf(e.stdout, "%sno %s of %d meets %s on both the training windows %s and their validation windows %s\n", pre, what, choice.Settings, slo, rg, val)
	}
	return m, choice, nil
}
