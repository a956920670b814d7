package tune

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// L-OPP's threshold is chosen on windows its model was not fitted on. A
// model fitted on the training part and a theta chosen on the scores of the
// very touches it was fitted on overstate how well it separates; so the
// training part is cut once more: each training segment's last quarter (at
// least one window) is its validation windows, the rest its fit windows.
// The model is fitted on the fit windows ([ValidationSplit]; mdk lopp train
// does this by default), theta is chosen on the validation windows, and the
// evaluation part stays untouched.

// ValidationSplit returns the fit and validation windows of a training
// range r: the validation windows are the last quarter of r, rounded down
// but at least one window; the fit windows are those before them. ok is
// false when r has fewer than 2 windows (no fit windows are left).
func ValidationSplit(r Range) (fit, val Range, ok bool) {
	v := max(1, r.Len()/4)
	val = Range{r.Last - v + 1, r.Last}
	fit = Range{r.First, val.First - 1}
	return fit, val, fit.First <= fit.Last
}

// ChoosesOnValidation reports whether Run chooses a policy's setting on the
// validation windows rather than on the whole training part: L-OPP, whose
// model is fitted on the training part's fit windows.
func ChoosesOnValidation(name string) bool { return name == "lopp" }

// DefaultDriftFactor is Config.DriftFactor's default.
const DefaultDriftFactor = 2.0

// Drift flags a chosen setting whose statistic on the evaluation part
// differs from the one it was chosen on by more than the drift factor: the
// tuned setting does not hold on unseen data.
type Drift struct {
	// Ratio is the larger of the two statistics over the smaller, each
	// taken at least the floor (a hundredth of the SLO's bound, or 1 ppm if
	// the bound is 0) so that two near-zero statistics do not differ.
	Ratio float64 `json:"ratio"`
	// Worse is true when the evaluation statistic is the larger.
	Worse bool `json:"worse"`
	// BrokeAt lists the evaluation windows whose promotion rate exceeds the
	// SLO's bound, by trace.
	BrokeAt []Segment `json:"broke_at"`
}

// drift returns the drift of a setting chosen with statistic chosen and
// measuring eval on the evaluation part, or nil if the two are within
// factor of each other (factor <= 0: never).
func (s SLO) drift(chosen, eval float64, factor float64) *Drift {
	if factor <= 0 {
		return nil
	}
	floor := max(s.Bound()/100, 1e-6)
	a, b := max(chosen, floor), max(eval, floor)
	ratio := max(a, b) / min(a, b)
	if !(ratio > factor) {
		return nil
	}
	return &Drift{Ratio: ratio, Worse: b > a}
}

// BrokeAt returns the windows of rg where r, a run over the whole trace
// called name, has a promotion rate above the bound (compared exactly in
// integers), as segments of consecutive windows.
func (s SLO) BrokeAt(name string, r *result.Result, rg Range) []Segment {
	var out []Segment
	for w := rg.First; w <= rg.Last; w++ {
		if !s.broken(r, w) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Last == w-1 {
			out[n-1].Last = w
			continue
		}
		out = append(out, Segment{Trace: name, First: w, Last: w, TraceWindows: r.Windows()})
	}
	return out
}

// Finish completes the choices cs that [SLO.Choose] (and, for L-OPP,
// Run's validation rule) made, as Run reports them: ChosenOn ("train"
// unless already set) and the drift flag, with broke(k), the evaluation
// windows where setting k of settings broke the SLO ([SLO.BrokeAt]).
// factor is Config.DriftFactor's: 0 is DefaultDriftFactor, negative never
// flags. Package fleet finishes its tuned settings with it too.
func (s SLO) Finish(cs []Choice, settings []policy.Setting, factor float64, broke func(k int) []Segment) {
	if factor == 0 {
		factor = DefaultDriftFactor
	}
	for i := range cs {
		c := &cs[i]
		if c.ChosenOn == "" {
			c.ChosenOn = "train"
		}
		if !c.Found {
			continue
		}
		k := slices.IndexFunc(settings, func(x policy.Setting) bool { return x.Policy() == c.Policy && x.Params() == c.Params })
		chosen := c.Train
		if c.Validation != nil {
			chosen = c.Validation
		}
		if d := s.drift(chosen.Stat, c.Eval.Stat, factor); d != nil {
			d.BrokeAt = broke(k)
			c.Drift = d
		}
	}
}

// String describes the drift as the text and HTML tables print it:
// "eval 49.0x the chosen max_pr; broke in x.mdkt windows 100, 125..126".
func (d *Drift) String() string {
	var b strings.Builder
	if d.Worse {
		fmt.Fprintf(&b, "will not hold: eval stat %.3gx the one it was chosen on", d.Ratio)
	} else {
		fmt.Fprintf(&b, "does not match: eval stat 1/%.3g of the one it was chosen on", d.Ratio)
	}
	if len(d.BrokeAt) > 0 {
		b.WriteString("; broke in")
		const most = 8
		trace := ""
		for i, s := range d.BrokeAt {
			if i == most {
				fmt.Fprintf(&b, " and %d more runs", len(d.BrokeAt)-most)
				break
			}
			sep := ","
			if s.Trace != trace {
				fmt.Fprintf(&b, " %s windows", s.Trace)
				trace, sep = s.Trace, ""
			}
			b.WriteString(sep)
			if s.First == s.Last {
				fmt.Fprintf(&b, " %d", s.First)
			} else {
				fmt.Fprintf(&b, " %d..%d", s.First, s.Last)
			}
		}
	}
	return b.String()
}

// ChooseOnValidation is L-OPP's choosing rule: of the settings idx that
// meet the SLO on the training part (train(k), as every policy must), the
// best on the validation windows (val(k); [result.BestIndex]: the most
// savings, ties to the lower statistic, then the earlier setting). It
// returns -1 if none meets the SLO on both. Requiring the training part
// too keeps a theta that the few validation windows happen to favour from
// passing while it breaks the SLO on windows it was fitted on (a phase
// change, a sweep whose refaults land outside the validation windows).
func (s SLO) ChooseOnValidation(idx []int, train, val func(k int) *result.Result) int {
	var ok []int
	for _, k := range idx {
		if s.Meets(train(k)) && s.Meets(val(k)) {
			ok = append(ok, k)
		}
	}
	return s.bestIndex(ok, val)
}

// ChooseTheta runs the settings ss of one policy over the trace r (in one
// pass, as Run does) and chooses by [SLO.ChooseOnValidation] with the
// training windows train and their validation windows val: what mdk lopp
// train reports for the theta of the model it fitted on the windows of
// train before val. The returned choice has ChosenOn "validation", its Train
// and Validation metrics; Eval is nil.
func ChooseTheta(ctx context.Context, r trace.Reader, ss []policy.Setting, slo SLO, train, val Range) (Choice, error) {
	if len(ss) == 0 {
		return Choice{}, fmt.Errorf("tune: no settings")
	}
	runs, err := mpc.Generate(ctx, r, ss, mpc.Options{})
	if err != nil {
		return Choice{}, err
	}
	if w := runs[0].Windows(); train.Last >= w || val.Last >= w {
		return Choice{}, fmt.Errorf("tune: training windows %s go past the end of the trace (%d windows)", train, w)
	}
	on := func(rg Range) func(int) *result.Result {
		return func(k int) *result.Result { return runs[k].Restrict(rg.First, rg.Last+1) }
	}
	idx := make([]int, len(ss))
	for k := range idx {
		idx[k] = k
	}
	c := Choice{Policy: ss[0].Policy(), Settings: len(ss), ChosenOn: "validation"}
	if k := slo.ChooseOnValidation(idx, on(train), on(val)); k >= 0 {
		c.Found, c.Params = true, ss[k].Params()
		c.Train, c.Validation = slo.Measure(on(train)(k)), slo.Measure(on(val)(k))
	}
	return c, nil
}
