package tune

import (
	"fmt"
	"time"

	"mdk/policy"
	"mdk/result"
)

// The rules of [Run], exported for callers that run the settings themselves
// (package fleet runs every setting of a job once and derives its curves and
// its tuned settings from the same runs). Run uses them too, so the rules
// are written once.

// DefaultWindowSplit returns Run's default window split of a trace of w
// windows: the first floor(w/2) windows train, the others evaluate. It fails
// when w < 2. name is used in the error.
func DefaultWindowSplit(name string, w int) (train, eval Range, err error) {
	tr, ev, _, err := windowSplit(name, w, nil, nil)
	if err != nil {
		return Range{}, Range{}, fmt.Errorf("tune: %w", err)
	}
	return tr[0], ev[0], nil
}

// YardstickSettings returns the OPP settings Run adds for its yardstick:
// OPP's default grid and OPP at the SLO's bound; for an SLO on a tier
// metric, whose bound is not a promotion rate, OPP's wide grid alone
// ([policy.WideGrid], up to r = 100%: as far as every other policy's grid
// reaches on the slowdown).
func YardstickSettings(window time.Duration, slo SLO) []policy.Setting {
	if slo.IsTier() {
		return policy.WideGrid("opp", window)
	}
	return append(policy.DefaultGrid("opp", window), policy.OPP{PPM: slo.PPM})
}

// Choose applies Run's choosing rules to runs already made. settings are
// the requested settings, followed from index yard on by the yardstick's
// ([YardstickSettings]); train(k) and eval(k) return setting k's result on
// the training and the evaluation part. Choose returns OPP's yardstick, the
// best of settings[yard:] on the evaluation part (nil if none meets the
// SLO), and one Choice per policy of settings[:yard], in first-seen order:
// its best setting on the training part ([result.Best]), measured on both
// parts.
func (s SLO) Choose(settings []policy.Setting, yard int, train, eval func(k int) *result.Result) (*Yardstick, []Choice) {
	var opp *Yardstick
	yidx := make([]int, 0, len(settings)-yard)
	for k := yard; k < len(settings); k++ {
		yidx = append(yidx, k)
	}
	if k := s.bestIndex(yidx, eval); k >= 0 {
		opp = &Yardstick{Params: settings[k].Params(), Settings: len(yidx), Eval: s.Measure(eval(k)), Note: YardstickNote}
		if s.IsTier() {
			opp.Note = YardstickNoteTier
		}
	}
	names, groups := result.ByPolicy(yard, func(k int) string { return settings[k].Policy() })
	var choices []Choice
	for _, name := range names {
		idx := groups[name]
		c := Choice{Policy: name, Settings: len(idx)}
		if k := s.bestIndex(idx, train); k >= 0 {
			c.Found, c.Params = true, settings[k].Params()
			c.Train, c.Eval = s.Measure(train(k)), s.Measure(eval(k))
			if opp != nil {
				c.OPPHeadroom, c.HasOPPHeadroom = opp.Eval.Savings-c.Eval.Savings, true
			}
		}
		choices = append(choices, c)
	}
	return opp, choices
}
