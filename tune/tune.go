package tune

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/tier"
	"mdk/trace"
)

// Input is one trace, read once.
type Input struct {
	Name   string // how outputs refer to it: usually its path
	Reader trace.Reader
}

// Config is one tuning job. Give either Traces (a window split) or Train and
// Eval (a trace split).
type Config struct {
	SLO SLO
	// Policies are policy specs (SPEC section 5): a bare name is the
	// policy's default grid. Empty means policy.DefaultPolicies.
	Policies []string

	// Window split: every trace of Traces is cut into training windows
	// TrainWindows and evaluation windows EvalWindows. Nil TrainWindows and
	// EvalWindows mean the first floor(W/2) windows train and the others
	// evaluate; one of them nil means the windows outside the other.
	Traces                    []Input
	TrainWindows, EvalWindows *Range

	// Trace split: whole traces, several runs of the same job.
	Train, Eval []Input

	// Progress, if set, is called after every window of every trace with
	// the trace's name, the windows done and the total (0 if unknown).
	Progress func(name string, done, total int)

	// DriftFactor flags a chosen setting whose evaluation statistic and the
	// statistic it was chosen on differ by more than this factor (Drift).
	// 0 means DefaultDriftFactor; a negative factor flags nothing.
	DriftFactor float64

	// Model is L-OPP's model (a *gbdt.Model), needed when Policies include
	// lopp.
	Model policy.Scorer

	// Sample and Groups, if set, run every trace on a sample of its pages
	// (mpc.Options): the metrics are estimates with error bounds.
	Sample trace.Sample
	Groups int

	// Controllers are judged like settings: each runs over every whole
	// trace (sim.RunControlled, the trace then held in memory) and is
	// measured on both parts, beside its grid's best fixed setting
	// chosen on train and in hindsight (Report.Controllers; the grid is
	// [ControllerGrid]'s). Controller specs among Policies are added.
	Controllers []policy.Controller
	// Tier is the tier a controller's slowdown SLO is costed on (--tier).
	Tier *tier.Tier
}

// Report is the outcome of [Run]: what was used for what, and for every
// policy the setting chosen on the training part and how it does on the
// evaluation part. It encodes to JSON with stable snake_case keys.
type Report struct {
	SLO    SLO      `json:"slo"`
	Window Duration `json:"window"` // the traces' window length
	Train  Part     `json:"train"`
	Eval   Part     `json:"eval"`
	// Validation is the last quarter of each training segment, where
	// L-OPP's theta is chosen ([ValidationSplit]); empty without lopp.
	Validation Part     `json:"validation"`
	Policies   []Choice `json:"policies"`
	// OPP is the yardstick: OPP's best setting at the SLO, chosen on the
	// evaluation part itself. Nil if no OPP setting meets the SLO there.
	OPP      *Yardstick `json:"opp_yardstick"`
	Warnings []string   `json:"warnings"`
	// Controllers are Config.Controllers judged and compared; absent
	// without them.
	Controllers []ControllerChoice `json:"controllers,omitempty"`
	// Sample, for runs on a sample of the pages, says which and how the
	// metrics are estimated; empty otherwise.
	Sample string `json:"sample,omitempty"`
	// SmallSamples warn of each trace whose sample is too small to say
	// much (result.Result.SmallSample: no pages, or fewer than
	// result.MinBoundPages), one line each, naming the trace.
	SmallSamples []string `json:"small_samples,omitempty"`
}

// Choice is one policy's tuned setting.
type Choice struct {
	Policy   string `json:"policy"`
	Settings int    `json:"settings"` // grid size tried
	// Params is the chosen setting (spec syntax without the name), "" when
	// no setting meets the SLO on the training part (Found false).
	Params string   `json:"params"`
	Found  bool     `json:"found"`
	Train  *Metrics `json:"train"` // nil when not Found
	Eval   *Metrics `json:"eval"`  // nil when not Found
	// ChosenOn is the part the setting was chosen on: "train", or
	// "validation" for L-OPP ([ChoosesOnValidation]), whose metrics there
	// are Validation (nil otherwise).
	ChosenOn   string   `json:"chosen_on"`
	Validation *Metrics `json:"validation"`
	// Drift, if set, says the evaluation statistic differs from the one
	// the setting was chosen on by more than Config.DriftFactor, and where
	// the evaluation windows broke the SLO.
	Drift *Drift `json:"drift"`
	// OPPHeadroom is the yardstick's evaluation savings minus this
	// setting's evaluation savings (0.05 = 5 points); set when both exist.
	OPPHeadroom    float64 `json:"opp_headroom"`
	HasOPPHeadroom bool    `json:"has_opp_headroom"`
}

// Metrics are one setting's metrics on one part (pooled over its segments).
type Metrics struct {
	Stat             float64 `json:"stat"` // the SLO's statistic
	Savings          float64 `json:"savings"`
	SavedPageWindows int64   `json:"saved_page_windows"`
	AlivePageWindows int64   `json:"alive_page_windows"`
	Promotions       int64   `json:"promotions"`
	Windows          int     `json:"windows"`
	// BrokenWindows counts the windows whose promotion rate exceeds the
	// SLO's bound (whatever the statistic).
	BrokenWindows int `json:"broken_windows"`
	// MeetsSLO reports whether Stat is within the bound.
	MeetsSLO bool `json:"meets_slo"`
	// Err, for a run on a sample of the pages, holds the error bounds
	// of Stat and Savings that are printed (result.Result.PrintedBound);
	// nil for a run that is not sampled.
	Err *MetricsErr `json:"err,omitempty"`
}

// MetricsErr are the error bounds of a sampled part's metrics: nil (null in
// JSON) where none is printed, which under the rule of docs/bench.md
// ("Which bounds are printed") is every statistic of the per-window rates
// and savings: their bounds did not cover the exact values for 90% of the
// settings.
type MetricsErr struct {
	Stat    *float64 `json:"stat"`
	Savings *float64 `json:"savings"`
}

// Yardstick is OPP's best setting on the evaluation part.
type Yardstick struct {
	Params   string   `json:"params"`
	Settings int      `json:"settings"`
	Eval     *Metrics `json:"eval"`
	Note     string   `json:"note"`
}

// YardstickNote says what the yardstick is; YardstickNoteTier says it for
// an SLO on a tier metric, where OPP (whose budget is a promotion rate in
// every window) is a reference but not a bound: a policy that spends its
// promotions unevenly over the windows can beat it at the same slowdown.
const (
	YardstickNote     = "OPP (an oracle) with its best setting chosen on the evaluation part itself: the optimum there, not a tuned setting"
	YardstickNoteTier = "OPP (an oracle) over its wide grid (r up to 100%) with its best setting chosen on the evaluation part itself: " +
		"the optimum for a promotion-rate budget in every window, a reference but not a bound on the slowdown; not a tuned setting"
)

// YardstickClaim is what the text and HTML reports say the yardstick is,
// in parentheses after it: an oracle's optimum, or for an SLO on a tier
// metric a reference but not a bound (YardstickNoteTier).
func (s SLO) YardstickClaim() string {
	if s.IsTier() {
		return "an oracle: the optimum for a promotion-rate budget in every window, a reference but not a bound on the slowdown; not a tuned setting"
	}
	return "an oracle's optimum there, not a tuned setting"
}

// Duration is a time.Duration that encodes to JSON as a string ("30s").
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + trace.FormatDuration(time.Duration(d)) + `"`), nil
}

// input is one trace after its run.
type input struct {
	Input
	runs []*result.Result  // by setting
	ctl  []*sim.Controlled // by controller
	// ctlRetunes are each controller's retunes on this trace.
	ctlRetunes [][]Retune
	train      []Range
	val        []Range // the last quarter of each training range
	eval       []Range
	isEval     bool // trace split: the trace evaluates (else it trains)
}

// Run runs every setting over every trace, chooses each policy's setting on
// the training part and reports it on the evaluation part.
//
//  1. Check the split and that the traces share one window length
//     ([inputs], [checkWindows]).
//  2. Parse the policy specs with that window length and add OPP's
//     settings for the yardstick ([YardstickSettings]).
//  3. Run every setting over each whole trace in one pass (mpc.Generate)
//     and cut each run into its training and evaluation segments
//     ([input.run]).
//  4. Pool each setting's segments of each part ([part]) and apply the
//     choosing rules ([SLO.Choose]): each policy's best setting on the
//     training part, measured on both parts; OPP's best setting on the
//     evaluation part.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	// 1.
	if err := cfg.SLO.Check(); err != nil {
		return nil, err
	}
	ins, err := inputs(cfg)
	if err != nil {
		return nil, err
	}
	window, err := checkWindows(ins)
	if err != nil {
		return nil, err
	}
	cfg.SLO.Window = window
	rep := &Report{SLO: cfg.SLO, Window: Duration(window), Warnings: reuseWarnings(ins, cfg)}

	// 2.
	settings, err := parseSettings(cfg, window)
	if err != nil {
		return nil, err
	}
	yard := len(settings)
	settings = append(settings, YardstickSettings(window, cfg.SLO)...)
	yardEnd := len(settings)
	if cfg.Controllers, err = parseControllers(cfg, window); err != nil {
		return nil, err
	}
	var gridFrom, gridLen []int
	for _, a := range cfg.Controllers {
		if cfg.Sample.PPM != 0 && !cfg.Sample.All() {
			return nil, errors.New("tune: a controller needs every page, not a sample")
		}
		g := ControllerGrid(a, window)
		gridFrom, gridLen = append(gridFrom, len(settings)), append(gridLen, len(g))
		settings = append(settings, g...)
	}

	// 3.
	for _, in := range ins {
		if err := in.run(ctx, cfg, settings, rep); err != nil {
			return nil, err
		}
	}

	// 4.
	train := func(k int) *result.Result { return part(ins, k, partTrain) }
	val := func(k int) *result.Result { return part(ins, k, partValidation) }
	eval := func(k int) *result.Result { return part(ins, k, partEval) }
	rep.OPP, rep.Policies = cfg.SLO.Choose(settings[:yardEnd], yard, train, eval)
	for i, a := range cfg.Controllers {
		retunes := 0
		for _, in := range ins {
			retunes += len(in.ctlRetunes[i])
		}
		rep.Controllers = append(rep.Controllers, cfg.SLO.chooseController(a,
			func(which int) (*result.Result, int) { return ctlPart(ins, i, which) }, retunes, settings, gridFrom[i], gridLen[i], train, eval, rep.OPP))
	}
	for i := range rep.Policies {
		if c := &rep.Policies[i]; ChoosesOnValidation(c.Policy) {
			rep.chooseOnValidation(c, settings[:yard], train, val, eval)
		}
	}
	cfg.SLO.Finish(rep.Policies, settings[:yard], cfg.DriftFactor, func(k int) []Segment {
		var out []Segment
		for _, in := range ins {
			for _, rg := range in.eval {
				out = append(out, cfg.SLO.BrokeAt(in.Name, in.runs[k], rg)...)
			}
		}
		return out
	})
	return rep, nil
}

// chooseOnValidation redoes c, a choice of L-OPP, by its rule
// ([SLO.RedoOnValidation]).
func (rep *Report) chooseOnValidation(c *Choice, settings []policy.Setting, train, val, eval func(int) *result.Result) {
	rep.SLO.RedoOnValidation(c, settings, train, val, eval, rep.OPP)
}

// RedoOnValidation redoes c, a choice of a policy that
// [ChoosesOnValidation] (L-OPP), by its rule ([SLO.ChooseOnValidation]):
// of the policy's settings that meet the SLO on the training part, the best
// on the validation windows; with its headroom against the yardstick opp
// (nil: none). Package fleet chooses L-OPP for each job with it too.
func (s SLO) RedoOnValidation(c *Choice, settings []policy.Setting, train, val, eval func(int) *result.Result, opp *Yardstick) {
	var idx []int
	for k, s := range settings {
		if s.Policy() == c.Policy {
			idx = append(idx, k)
		}
	}
	*c = Choice{Policy: c.Policy, Settings: c.Settings, ChosenOn: "validation"}
	k := s.ChooseOnValidation(idx, train, val)
	if k < 0 {
		return
	}
	c.Found, c.Params = true, settings[k].Params()
	c.Train, c.Validation, c.Eval = s.Measure(train(k)), s.Measure(val(k)), s.Measure(eval(k))
	if opp != nil {
		c.OPPHeadroom, c.HasOPPHeadroom = opp.Eval.Savings-c.Eval.Savings, true
	}
}

// inputs checks the split of cfg and returns its traces, each marked as
// training or evaluation for a trace split.
func inputs(cfg Config) ([]*input, error) {
	var ins []*input
	switch {
	case len(cfg.Traces) > 0 && (len(cfg.Train) > 0 || len(cfg.Eval) > 0):
		return nil, errors.New("tune: give either traces to split by windows or train and eval traces, not both")
	case len(cfg.Traces) > 0:
		for _, in := range cfg.Traces {
			ins = append(ins, &input{Input: in})
		}
	case len(cfg.Train) == 0 && len(cfg.Eval) == 0:
		return nil, errors.New("tune: no traces")
	case len(cfg.Train) == 0 || len(cfg.Eval) == 0:
		return nil, errors.New("tune: a trace split needs at least one train trace and one eval trace")
	case cfg.TrainWindows != nil || cfg.EvalWindows != nil:
		return nil, errors.New("tune: train or eval windows apply to a window split, not to train and eval traces")
	default:
		for _, in := range cfg.Train {
			ins = append(ins, &input{Input: in})
		}
		for _, in := range cfg.Eval {
			ins = append(ins, &input{Input: in, isEval: true})
		}
	}
	return ins, nil
}

// checkWindows returns the traces' one window length, or an error naming
// two traces that differ.
func checkWindows(ins []*input) (time.Duration, error) {
	window := ins[0].Reader.Header().Window
	for _, in := range ins[1:] {
		if w := in.Reader.Header().Window; w != window {
			return 0, fmt.Errorf("tune: %s has %s windows but %s has %s: tuning needs runs with one window length",
				in.Name, trace.FormatDuration(w), ins[0].Name, trace.FormatDuration(window))
		}
	}
	return window, nil
}

// reuseWarnings warns, for a trace split, about each trace that both trains
// and evaluates.
func reuseWarnings(ins []*input, cfg Config) []string {
	warnings := []string{}
	if len(cfg.Traces) > 0 {
		return warnings
	}
	seen := map[string]bool{}
	for _, in := range ins {
		if in.isEval && seen[in.Name] {
			warnings = append(warnings, fmt.Sprintf("%s is both a train and an eval trace: the evaluation is not on unseen data", in.Name))
		}
		seen[in.Name] = seen[in.Name] || !in.isEval
	}
	return warnings
}

// parseSettings parses cfg's policy specs ([policy.ParseSpecs]: the
// default policies if none, and lopp with a model), each bare name over its
// wide grid when the SLO is on a tier metric ([policy.WideGrid]: OPP then
// reaches what the other policies' grids reach on the slowdown). Controller
// specs (auto:...) are parseControllers'; a list of controllers only has no
// settings.
func parseSettings(cfg Config, window time.Duration) ([]policy.Setting, error) {
	var specs []string
	for _, s := range cfg.Policies {
		if !IsController(s) { // parseControllers
			specs = append(specs, s)
		}
	}
	if len(specs) == 0 && len(cfg.Policies) > 0 {
		return nil, nil // controllers only
	}
	return policy.ParseSpecs(specs, window, policy.SpecOptions{Model: cfg.Model, Wide: cfg.SLO.IsTier()})
}

// parseControllers parses the controller specs among cfg's policy specs,
// with their tier and L-OPP's model.
func parseControllers(cfg Config, window time.Duration) ([]policy.Controller, error) {
	out := slices.Clone(cfg.Controllers)
	for _, s := range cfg.Policies {
		if !IsController(s) {
			continue
		}
		c, err := ParseController(s, window, cfg.Tier)
		if err != nil {
			if _, ok := err.(*policy.SpecError); ok {
				return nil, err
			}
			return nil, fmt.Errorf("tune: %w", err)
		}
		a, ok := c.(*Auto)
		if !ok {
			out = append(out, c)
			continue
		}
		ss := a.Settings()
		if err := policy.AttachModel(ss, cfg.Model); err != nil {
			return nil, err
		}
		for i, x := range ss {
			a.Grid[i] = x.(policy.Online)
		}
		out = append(out, a)
	}
	return out, nil
}

// run runs every setting over the whole trace and cuts it into training and
// evaluation segments, adding them (and any overlap warning) to rep.
func (in *input) run(ctx context.Context, cfg Config, settings []policy.Setting, rep *Report) error {
	opts := mpc.Options{Sample: cfg.Sample, Groups: cfg.Groups}
	if cfg.Progress != nil {
		opts.Progress = func(done, total int) { cfg.Progress(in.Name, done, total) }
	}
	r := in.Reader
	var t *trace.Trace
	if len(cfg.Controllers) > 0 {
		var err error
		if t, err = trace.ReadAll(r); err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		r = t.NewReader()
	}
	runs, err := mpc.Generate(ctx, r, settings, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	for _, a := range cfg.Controllers {
		c, err := sim.RunControlled(ctx, t, a)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		in.ctl = append(in.ctl, c)
		var rt []Retune
		if ar, ok := c.Run.(*AutoRun); ok {
			rt = ar.Retunes
		}
		in.ctlRetunes = append(in.ctlRetunes, rt)
	}
	in.runs = runs
	if r := runs[0]; r.Sampled() {
		rep.Sample = fmt.Sprintf("%s of the pages; counts are the sample's x %d, rates the sample's own; %d sub-samples",
			policy.FormatRate(r.SamplePPM), 1_000_000/r.SamplePPM, len(r.Groups))
		if w := r.SmallSample(); w != "" {
			rep.SmallSamples = append(rep.SmallSamples, in.Name+": "+w)
		}
	}
	w := runs[0].Windows()
	if w == 0 {
		return fmt.Errorf("tune: %s has no windows", in.Name)
	}
	switch {
	case len(cfg.Traces) > 0:
		tr, ev, overlap, err := windowSplit(in.Name, w, cfg.TrainWindows, cfg.EvalWindows)
		if err != nil {
			return fmt.Errorf("tune: %w", err)
		}
		if overlap != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: train and eval windows overlap (windows %s): the evaluation is not on unseen data", in.Name, overlap))
		}
		in.train, in.eval = tr, ev
	case in.isEval:
		in.eval = []Range{{0, w - 1}}
	default:
		in.train = []Range{{0, w - 1}}
	}
	for _, r := range in.train {
		rep.Train.add(Segment{Trace: in.Name, First: r.First, Last: r.Last, TraceWindows: w})
		_, v, _ := ValidationSplit(r)
		in.val = append(in.val, v)
		if slices.ContainsFunc(settings, func(s policy.Setting) bool { return ChoosesOnValidation(s.Policy()) }) {
			rep.Validation.add(Segment{Trace: in.Name, First: v.First, Last: v.Last, TraceWindows: w})
		}
	}
	for _, r := range in.eval {
		rep.Eval.add(Segment{Trace: in.Name, First: r.First, Last: r.Last, TraceWindows: w})
	}
	return nil
}

// Parts of the data: training, its validation windows, evaluation.
const (
	partTrain = iota
	partValidation
	partEval
)

// part returns setting k's result on a part (partTrain, partValidation or
// partEval): its segments of every trace, pooled.
func part(ins []*input, k int, which int) *result.Result {
	var rs []*result.Result
	for _, in := range ins {
		rngs := [...][]Range{in.train, in.val, in.eval}[which]
		for _, r := range rngs {
			rs = append(rs, in.runs[k].Restrict(r.First, r.Last+1))
		}
	}
	return pool(rs)
}
