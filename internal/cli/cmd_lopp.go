package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"mdk/gbdt"
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
	}
	cmd.AddCommand(newLOPPTrainCmd(e))
	return cmd
}

type loppTrainOptions struct {
	out     string
	rate    string
	windows string
	cfg     gbdt.Config
}

func newLOPPTrainCmd(e *env) *cobra.Command {
	o := loppTrainOptions{cfg: gbdt.DefaultConfig}
	cmd := &cobra.Command{
		Use:   "train TRACE -o MODEL.json",
		Short: "Train an L-OPP model on a trace's training windows",
		Long: `Train labels every touch in the training windows with whether OPP at
--rate reclaims the gap after it, and trains the classifier on the touches'
features. Only the training windows are read for labels: a life still alive
at the end of them counts as ending there, so nothing after them leaks into
the model.

By default the training windows are the first half (floor(W/2) windows),
the same default split as mdk tune, so evaluating the model with
mdk tune --model on the same trace is on windows it has not seen.`,
		Example: `  mdk lopp train trace.mdkt -o model.json
  mdk lopp train trace.mdkt --train-windows 0..119 --rate 1% --rounds 50 -o model.json
  mdk mpc trace.mdkt -p lopp -p opp --model model.json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLOPPTrain(e, o, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.out, "output", "o", "", "model `FILE` to write (JSON; required)")
	fl.StringVar(&o.rate, "rate", "2%", "OPP's target `rate` for the labels")
	fl.StringVar(&o.windows, "train-windows", "", "training windows `FIRST..LAST` (inclusive); default: the first half")
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
	var span lopp.Span
	if o.windows != "" {
		rg, err := tune.ParseRange(o.windows)
		if err != nil {
			return usagef("--train-windows: %v", err)
		}
		span = lopp.Span{From: rg.First, To: rg.Last + 1}
	} else {
		W := r.Header().Windows
		if W == 0 { // unknown until the end: read it all
			t, err := trace.ReadAll(r)
			if err != nil {
				return err
			}
			W, r = len(t.Windows), t.NewReader()
		}
		span = lopp.Span{From: 0, To: W / 2}
	}
	d, err := lopp.Dataset(r, ppm, span)
	if err != nil {
		return err
	}
	x, y := d.Labelled()
	if len(y) == 0 {
		return fmt.Errorf("%s: no touch with a known label in training windows %v", path, span)
	}
	m, err := gbdt.Train(x, lopp.NumFeatures, y, o.cfg)
	if err != nil {
		return err
	}
	right := 0
	for i := range y {
		if (m.Score(x[i*lopp.NumFeatures:(i+1)*lopp.NumFeatures]) >= 0.5) == y[i] {
			right++
		}
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
	fmt.Fprintf(e.stdout, "trained on windows %d..%d of %s: %d touches, %d labelled reclaimed by opp:r=%s, %d left out as censored (gap open at the end of the windows read)\n",
		span.From, span.To-1, path, len(y), pos, policy.FormatRate(ppm), d.NumCensored())
	fmt.Fprintf(e.stdout, "training accuracy %.2f%% (%d trees of depth %d)\nwrote %s\n",
		100*float64(right)/float64(len(y)), o.cfg.Rounds, o.cfg.MaxDepth, o.out)
	return nil
}
