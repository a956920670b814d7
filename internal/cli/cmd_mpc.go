package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mdk/internal/outfile"
	"mdk/mpc"
	"mdk/policy"
	"mdk/report"
	"mdk/result"
	"mdk/sim"
	"mdk/tier"
	"mdk/trace"
	"mdk/tune"
)

type mpcOptions struct {
	policies []string
	csv      bool
	json     bool
	plot     string
	x        string
	logX     bool
	targets  string
	model    string
	tier     string
	sample   sampleOptions
}

func (o *mpcOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&o.policies, "policy", "p", nil, "policy `spec` (repeatable); none: every policy's default grid")
	cmd.Flags().StringVar(&o.x, "x", "max_pr", "promotion-rate `statistic` for the x axis and the targets: max_pr, p99_pr, p98_pr or mean_pr")
	cmd.Flags().StringVar(&o.targets, "target", defaultTargets(), "comma-separated promotion-rate `targets` for the best-setting table")
	cmd.Flags().StringVar(&o.model, "model", "", "L-OPP model `FILE` (from mdk lopp train) for lopp settings")
	cmd.Flags().StringVar(&o.tier, "tier", "", tierUsage)
	o.sample.addFlags(cmd.Flags())
}

func newMPCCmd(e *env) *cobra.Command {
	var o mpcOptions
	cmd := &cobra.Command{
		Use:   "mpc TRACE",
		Short: "Compute memory performance curves: every setting of every policy in one pass",
		Long: `Mpc computes the memory performance curve of each policy: the savings and
promotion-rate statistics of every setting, in one streaming pass over the
trace. Its numbers equal the reference simulator's (mdk sim), setting by
setting; mdk verify checks that on any trace.

By default it prints, for each policy, the best setting at each target (the
most savings with the statistic at or below the target) and its headroom
against OPP at the same target (OPP's savings minus the setting's, in
points). --csv and --json print every setting (SPEC section 6); --plot
draws the curves (SVG or PNG by extension).

A policy given by name alone uses its default grid (docs/policies.md).

A policy may also be a controller (auto:..., gswap[:...], damos[:...];
docs/policies.md, "Controllers"): it is simulated over the whole trace and
its realised point is printed after the table with its headroom against OPP
at its own statistic, and the sentence "X at its defaults saves A% at
max_pr B%; OPP at B% saves C%; age at its best, D%" (age's default grid is
run for it when no age setting is among the policies).

--sample RATE (10%, 1%, 0.1%: 1/N of 100%) runs on the pages that a seeded
hash of (space, page) keeps, each page in or out for the whole trace:
counts are the sample's x 1/RATE, rates the sample's own, and every value
has a 95% error bound from --sample-groups disjoint sub-samples (± in the
table, *_err columns in CSV, "err" in JSON). A trace recorded sampled (mdk
record --sample) is treated so without the flag. --sample 100% is the exact
run. docs/bench.md ("Sampled curves") states each estimator and measures
the error; max_pr from a sample is biased upward.`,
		Example: `  mdk mpc trace.mdkt
  mdk mpc trace.mdkt -p age -p 'opp:r=0%..20%/1%' --csv > curves.csv
  mdk mpc trace.mdkt -p 'age:A=1m..60m/1m' -p opp --plot curves.svg --target 1%,2%
  mdk mpc big.mdkt --sample 1% --csv > curves-1pct.csv`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runMPC(e, o, args[0]) },
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.csv, "csv", false, "print every setting as CSV")
	cmd.Flags().BoolVar(&o.json, "json", false, "print every setting as JSON")
	cmd.Flags().StringVar(&o.plot, "plot", "", "draw the curves to `FILE` (.svg or .png)")
	cmd.Flags().BoolVar(&o.logX, "log-x", false, "logarithmic x axis in --plot")
	return cmd
}

// curves runs the generator for o's policies over the trace at path; x is
// o's --x, parsed (mpcOptions.parse).
func (e *env) curves(path string, o mpcOptions, x tier.Axis) ([]*result.Result, error) {
	rs, _, err := e.curvesWindow(path, o, x)
	return rs, err
}

// curvesWindow is curves, also returning the trace's window length.
func (e *env) curvesWindow(path string, o mpcOptions, x tier.Axis) ([]*result.Result, time.Duration, error) {
	rs, _, window, err := e.curveSet(path, o, x)
	return rs, window, err
}

// curveSet is curvesWindow, also returning the controllers' runs (their
// results are the last of the results, in spec order).
func (e *env) curveSet(path string, o mpcOptions, x tier.Axis) ([]*result.Result, []report.Controller, time.Duration, error) {
	rs, ctl, _, window, err := e.curveSetRef(path, o, x)
	return rs, ctl, window, err
}

// curveSetRef is curveSet, also returning, when there are controllers and
// no age setting among the specs, age's default grid run on the same pass:
// the reference of the controllers' sentence in mdk mpc ("age at its
// best"), kept out of the curves printed.
func (e *env) curveSetRef(path string, o mpcOptions, x tier.Axis) ([]*result.Result, []report.Controller, []*result.Result, time.Duration, error) {
	r, c, err := e.openTrace(path)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	defer c.Close()
	window := r.Header().Window
	var specs, autos []string
	for _, s := range o.policies {
		if tune.IsController(s) {
			autos = append(autos, s)
		} else {
			specs = append(specs, s)
		}
	}
	var ss []policy.Setting
	if len(specs) > 0 || len(autos) == 0 {
		// On a tier metric's axis, opp's grid reaches r = 100% (policy.WideGrid).
		if ss, err = parseSpecsOn(specs, window, o.model, x.IsTier()); err != nil {
			return nil, nil, nil, 0, err
		}
	}
	s, k, err := o.sample.parse()
	if err != nil {
		return nil, nil, nil, 0, err
	}
	var ctl []report.Controller
	if len(autos) > 0 {
		if ctl, ss, r, err = e.runControllers(r, autos, ss, o, x); err != nil {
			return nil, nil, nil, 0, err
		}
		if !s.All() {
			return nil, nil, nil, 0, usagef("--sample: a controller needs every page")
		}
	}
	cut := len(ss)
	if len(autos) > 0 && !slices.ContainsFunc(ss, func(x policy.Setting) bool { return x.Policy() == "age" }) {
		ss = append(ss, policy.DefaultGrid("age", window)...)
	}
	// The curves print only the bounds of result.PrintedBound: the
	// sub-samples keep their totals (mpc.Options.GroupTotals).
	rs, err := mpc.Generate(e.ctx, r, ss, mpc.Options{Progress: e.progress("mpc"), Sample: s, Groups: k, GroupTotals: true})
	e.endProgress()
	if err != nil {
		return nil, nil, nil, 0, err
	}
	rs, ref := rs[:cut:cut], rs[cut:]
	for _, c := range ctl {
		rs = append(rs, c.Result)
	}
	return rs, ctl, ref, window, nil
}

// runControllers reads the trace into memory and runs each controller
// spec over it (sim.RunControlled), printing each one's switches and
// retunes on stderr. It returns their results, the settings with OPP added
// at each controller's realised statistic (its headroom is against OPP
// there), and a reader over the trace for the curves.
func (e *env) runControllers(r trace.Reader, specs []string, ss []policy.Setting, o mpcOptions, x tier.Axis) ([]report.Controller, []policy.Setting, trace.Reader, error) {
	t, err := trace.ReadAll(r)
	if err != nil {
		return nil, nil, nil, err
	}
	if !t.Header.Sample.All() {
		return nil, nil, nil, usagef("a controller needs a trace of every page, not a %s sample", t.Header.Sample)
	}
	var out []report.Controller
	for _, spec := range specs {
		a, err := parseController(spec, t.Header.Window, o.tier, o.model)
		if err != nil {
			return nil, nil, nil, err
		}
		c, err := sim.RunControlled(e.ctx, t, a)
		if err != nil {
			return nil, nil, nil, err
		}
		out = append(out, report.Controller{Result: c.Result, Switches: len(c.Switches)})
		switch run := c.Run.(type) {
		case *tune.AutoRun:
			fmt.Fprintf(e.stderr, "mdk: auto:%s: %d retunes, %d switches\n", a.Params(), len(run.Retunes), len(c.Switches))
		case *policy.SenpaiRun:
			fmt.Fprintf(e.stderr, "mdk: senpai:%s: %d probes, %d backoffs, %d switches\n", a.Params(), run.Probes, run.Backoffs, len(c.Switches))
		default:
			fmt.Fprintf(e.stderr, "mdk: %s:%s: %d switches\n", a.Policy(), a.Params(), len(c.Switches))
		}
		if !x.IsTier() {
			ppm := int64(c.Result.Stat(x.Stat) * policy.MaxPPM) // OPP at the rate it realised, rounded down
			ss = append(ss, policy.OPP{PPM: min(ppm, policy.MaxPPM)})
		}
	}
	return out, ss, t.NewReader(), nil
}

// parse parses --x (a statistic, or with --tier a tier metric too) and
// --target.
func (o mpcOptions) parse() (tier.Axis, []float64, error) {
	x, err := parseX(o.x, o.tier != "")
	if err != nil {
		return tier.Axis{}, nil, err
	}
	var targets []float64
	if o.targets != "" {
		ppms, err := policy.ParseRates(o.targets)
		if err != nil {
			return tier.Axis{}, nil, usagef("--target: %v", err)
		}
		for _, p := range ppms {
			targets = append(targets, float64(p)/policy.MaxPPM)
		}
	}
	return x, targets, nil
}

func runMPC(e *env, o mpcOptions, path string) error {
	x, targets, err := o.parse()
	if err != nil {
		return err
	}
	if o.plot != "" {
		if ext := strings.ToLower(filepath.Ext(o.plot)); ext != ".svg" && ext != ".png" {
			return usagef("--plot %s: want a .svg or .png file name", o.plot)
		}
		if err := outfile.Check(o.plot); err != nil {
			return err
		}
	}
	t, err := loadTier(o.tier)
	if err != nil {
		return err
	}
	rs, _, ageRef, window, err := e.curveSetRef(path, o, x)
	if err != nil {
		return err
	}
	if t != nil {
		if err := writeTierMPC(e, o, rs, x, targets, t, window); err != nil || o.csv || o.json || x.Metric != "" {
			return err
		}
		// A promotion-rate axis: the controllers' points as without a
		// tier (senpai needs one).
		return writeControllerPoints(e, rs, ageRef, x.Stat, o.policies)
	}
	st := x.Stat
	if o.plot != "" {
		if err := writePlotFile(o.plot, rs, st, o.logX, targets); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "mdk: wrote %s\n", o.plot)
	}
	switch {
	case o.csv:
		fmt.Fprint(e.stderr, sampleWarning(rs))
		return result.WriteCSV(e.stdout, rs)
	case o.json:
		fmt.Fprint(e.stderr, sampleWarning(rs))
		return result.WriteJSON(e.stdout, rs, false)
	}
	fmt.Fprint(e.stdout, report.SampleNote(rs))
	fmt.Fprint(e.stderr, sampleWarning(rs))
	if err := report.WriteBestTable(e.stdout, rs, report.TableOptions{X: x, Targets: targets}); err != nil {
		return err
	}
	return writeControllerPoints(e, rs, ageRef, st, o.policies)
}

// writeControllerPoints prints each controller's point on the curves: its
// realised statistic and savings, and its headroom against OPP's best
// setting at that statistic; then the sentence of issue 27: "X at its
// defaults saves A% at max_pr B%; OPP at B% saves C%; age at its best (A=..), D%"
// (age's best setting at that statistic, from the curves or from ageRef,
// age's default grid run beside them). specs are the command's specs, in
// order: the controllers' results follow the curves in that order.
func writeControllerPoints(e *env, rs, ageRef []*result.Result, st result.Stat, specs []string) error {
	var opp, age []*result.Result
	for _, r := range append(slices.Clone(rs), ageRef...) {
		switch r.Policy {
		case "opp":
			opp = append(opp, r)
		case "age":
			age = append(age, r)
		}
	}
	var ctlSpecs []string
	for _, s := range specs {
		if tune.IsController(s) {
			ctlSpecs = append(ctlSpecs, strings.TrimSpace(s))
		}
	}
	i := 0
	for _, r := range rs {
		if !tune.IsController(r.Policy) {
			continue
		}
		x := r.Stat(st)
		line := result.AtRealised(r, opp, st).Line()
		name := r.Policy + ":" + r.Params
		if i < len(ctlSpecs) {
			name = ctlSpecs[i]
		}
		i++
		if !strings.Contains(name, ":") {
			name += " at its defaults"
		}
		line += fmt.Sprintf("\n%s saves %.2f%% at %s %.4f%%", name, 100*r.Savings(), st, 100*x)
		if b := result.Best(opp, st, x); b != nil {
			line += fmt.Sprintf("; OPP at %.4f%% saves %.2f%%", 100*x, 100*b.Savings())
		}
		if a := result.Best(age, st, x); a != nil {
			line += fmt.Sprintf("; age at its best (%s), %.2f%%", a.Params, 100*a.Savings())
		} else {
			line += fmt.Sprintf("; age: none at or below %.4f%%", 100*x)
		}
		if _, err := fmt.Fprintln(e.stdout, line); err != nil {
			return err
		}
	}
	return nil
}

func writePlotFile(path string, rs []*result.Result, st result.Stat, logX bool, targets []float64) error {
	return writePlot(path, rs, report.PlotOptions{X: st, LogX: logX, Targets: targets})
}

// writePlotFile draws the curves of rs to path with opts.
func writePlot(path string, rs []*result.Result, opts report.PlotOptions) error {
	names, groups := result.Group(rs)
	var curves []report.Curve
	for _, n := range names {
		curves = append(curves, report.Curve{Policy: n, Results: groups[n]})
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	return writeFile(path, func(w io.Writer) error {
		if err := report.WritePlot(w, format, curves, opts); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		return nil
	})
}

// defaultTargets is --target's default: result.DefaultTargets as rates.
func defaultTargets() string {
	var s []string
	for _, t := range result.DefaultTargets {
		s = append(s, report.FormatTarget(t))
	}
	return strings.Join(s, ",")
}
