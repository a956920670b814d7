package result

import (
	"fmt"
	"strings"
)

// Realised is a run that is not a grid's setting (a controller's: its
// setting changes while it runs) placed on the curves of fixed settings at
// the statistic it realised: each fixed policy's best setting whose
// statistic is at most the run's, and OPP's, which spends the same
// promotion budget (issue 22's headroom at the realised rate, issue 27's
// "what your controller leaves on the table"). Nothing here depends on
// which controller made the run.
type Realised struct {
	Run  *Result
	Stat Stat
	// X is Run's statistic Stat.
	X float64
	// OPP is OPP's best setting with Stat at most X among the fixed
	// results (nil if there is none: OPP not among them, or no rate low
	// enough).
	OPP *Result
	// Policies are the other fixed policies' best settings at X, one per
	// policy in first-seen order (Choose at the target X: Best nil where no
	// setting's statistic is at most X, the headroom against OPP at X).
	Policies []Choice
}

// AtRealised places run on the curves of fixed: the fixed settings'
// results on the same trace (controllers' runs excluded; OPP among them
// for the headroom, ideally at run's own realised rate, as mdk mpc and
// mdk report add it).
func AtRealised(run *Result, fixed []*Result, st Stat) Realised {
	x := run.Stat(st)
	r := Realised{Run: run, Stat: st, X: x}
	_, groups := Group(fixed)
	r.OPP = Best(groups["opp"], st, x)
	for _, c := range Choose(fixed, st, []float64{x}) {
		if c.Policy != "opp" {
			r.Policies = append(r.Policies, c)
		}
	}
	return r
}

// Headroom returns OPP's savings at the realised statistic minus the run's
// (0.05 = 5 points), and whether OPP had a setting there.
func (r Realised) Headroom() (float64, bool) {
	if r.OPP == nil {
		return 0, false
	}
	return r.OPP.Savings() - r.Run.Savings(), true
}

// Name is the run's spec: "auto:paw,slo=max_pr<=2%,...".
func (r Realised) Name() string { return r.Run.Policy + ":" + r.Run.Params }

// Line is the line mdk mpc prints for a controller: its realised statistic
// and savings, and its headroom against OPP's best setting at that
// statistic:
//
//	controller auto:...: max_pr 1.9876%, savings 4.12%; headroom vs opp at max_pr <= 1.9876%: +23.39 pts (opp:r=1.9876% saves 27.51%)
func (r Realised) Line() string {
	line := fmt.Sprintf("controller %s: %s %.4f%%, savings %.2f%%", r.Name(), r.Stat, 100*r.X, 100*r.Run.Savings())
	if h, ok := r.Headroom(); ok {
		line += fmt.Sprintf("; headroom vs opp at %s <= %.4f%%: %+.2f pts (opp:%s saves %.2f%%)", r.Stat, 100*r.X, 100*h, r.OPP.Params, 100*r.OPP.Savings())
	}
	return line
}

// Sentence says, in the words of issue 27, what the run leaves on the
// table:
//
//	auto:... saves 4.12% at max_pr 1.9876%; OPP at 1.9876% saves 27.51%; age at its best (A=48), 3.04%; paw: none at or below 1.9876%
//
// The OPP clause is left out when OPP has no setting there.
func (r Realised) Sentence() string {
	x := fmt.Sprintf("%.4f%%", 100*r.X)
	parts := []string{fmt.Sprintf("%s saves %.2f%% at %s %s", r.Name(), 100*r.Run.Savings(), r.Stat, x)}
	if r.OPP != nil {
		parts = append(parts, fmt.Sprintf("OPP at %s saves %.2f%%", x, 100*r.OPP.Savings()))
	}
	for _, c := range r.Policies {
		if c.Best == nil {
			parts = append(parts, fmt.Sprintf("%s: none at or below %s", c.Policy, x))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s at its best (%s), %.2f%%", c.Policy, c.Best.Params, 100*c.Best.Savings()))
	}
	return strings.Join(parts, "; ")
}
