package tune

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"mdk/policy"
	"mdk/result"
)

// ControllerChoice is one controller judged like a setting, with the
// comparison an engineer needs beside it (issue 22): on the evaluation part,
// the controller, the best fixed setting of its base grid chosen on the
// training part, the best fixed setting of that grid in hindsight (chosen
// on the evaluation part itself: unattainable, the ceiling of fixed
// settings) and OPP's yardstick.
type ControllerChoice struct {
	Spec  string   `json:"spec"` // auto:...
	Train *Metrics `json:"train"`
	Eval  *Metrics `json:"eval"`
	// Switches counts the switches of the setting in the evaluation
	// windows (SwitchesTotal: over the whole runs); Retunes the retunes.
	Switches      int `json:"switches"`
	SwitchesTotal int `json:"switches_total"`
	Retunes       int `json:"retunes"`
	// Fixed is the best fixed setting of the base grid chosen on the
	// training part, measured on the evaluation part; Hindsight the best
	// chosen on the evaluation part. Nil when none meets the SLO.
	Fixed     *Fixed `json:"fixed_on_train"`
	Hindsight *Fixed `json:"fixed_in_hindsight"`
	// OPPHeadroom is OPP's yardstick's eval savings minus the controller's.
	OPPHeadroom    float64 `json:"opp_headroom"`
	HasOPPHeadroom bool    `json:"has_opp_headroom"`
}

// Fixed is a fixed setting in a comparison.
type Fixed struct {
	Spec string   `json:"spec"`
	Eval *Metrics `json:"eval"`
}

// CompareRow is one row of the comparison: what Controllers hold, flat.
type CompareRow struct {
	Controller string
	Kind       string // auto, fixed on train, fixed in hindsight, opp
	Setting    string
	M          *Metrics
	Switches   int
}

// Rows flattens a controller's comparison.
func (c *ControllerChoice) Rows(opp *Yardstick) []CompareRow {
	rows := []CompareRow{{c.Spec, "controller", c.Spec, c.Eval, c.Switches}}
	if c.Fixed != nil {
		rows = append(rows, CompareRow{c.Spec, "fixed on train", c.Fixed.Spec, c.Fixed.Eval, 0})
	}
	if c.Hindsight != nil {
		rows = append(rows, CompareRow{c.Spec, "fixed in hindsight", c.Hindsight.Spec, c.Hindsight.Eval, 0})
	}
	if opp != nil {
		rows = append(rows, CompareRow{c.Spec, "opp", "opp:" + opp.Params, opp.Eval, 0})
	}
	return rows
}

// chooseController fills a controller's row from its runs and those of
// its grid (settings gridFrom..gridFrom+gridLen-1, [ControllerGrid]).
func (s SLO) chooseController(a policy.Controller, ctl func(part int) (*result.Result, int), retunes int, settings []policy.Setting, gridFrom, gridLen int, train, eval func(int) *result.Result, opp *Yardstick) ControllerChoice {
	tr, _ := ctl(partTrain)
	ev, sw := ctl(partEval)
	_, total := ctl(-1)
	c := ControllerChoice{Spec: a.Policy() + ":" + a.Params(), Train: s.Measure(tr), Eval: s.Measure(ev), Switches: sw, SwitchesTotal: total, Retunes: retunes}
	idx := make([]int, gridLen)
	for i := range idx {
		idx[i] = gridFrom + i
	}
	if k := s.bestIndex(idx, train); k >= 0 {
		c.Fixed = &Fixed{Spec: policy.String(settings[k]), Eval: s.Measure(eval(k))}
	}
	if k := s.bestIndex(idx, eval); k >= 0 {
		c.Hindsight = &Fixed{Spec: policy.String(settings[k]), Eval: s.Measure(eval(k))}
	}
	if opp != nil {
		c.OPPHeadroom, c.HasOPPHeadroom = opp.Eval.Savings-c.Eval.Savings, true
	}
	return c
}

// writeControllers writes the comparison table of rep's controllers.
func writeControllers(b *strings.Builder, rep *Report) {
	if len(rep.Controllers) == 0 {
		return
	}
	st, bound := rep.SLO.Stat.String(), policy.FormatRate(rep.SLO.PPM)
	fmt.Fprintf(b, "\nControllers on the eval part, beside the best fixed setting of their grid chosen on train, the best in hindsight (chosen on eval: the ceiling of fixed settings) and OPP:\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "controller\twhat\tsetting\teval %s\teval savings\teval windows > %s\teval SLO\tswitches\n", st, bound)
	for i := range rep.Controllers {
		for _, r := range rep.Controllers[i].Rows(rep.OPP) {
			verdict := "met"
			if !r.M.MeetsSLO {
				verdict = "BROKEN"
			}
			sw := "-"
			if r.Kind == "controller" {
				sw = strconv.Itoa(r.Switches)
			}
			name := r.Setting
			if r.Kind == "controller" {
				name = "(" + strconv.Itoa(rep.Controllers[i].Retunes) + " retunes)"
				if !IsAuto(r.Controller) {
					name = "(decides every window)"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", r.Controller, r.Kind, name, pct(r.M.Stat), pct(r.M.Savings), r.M.BrokenWindows, r.M.Windows, verdict, sw)
		}
	}
	tw.Flush()
}

// CompareHeader is the header of WriteCompareCSV.
var CompareHeader = []string{"controller", "what", "setting", "stat", "eval_stat", "eval_savings", "eval_saved_page_windows", "eval_alive_page_windows", "eval_broken_windows", "eval_windows", "eval_meets_slo", "switches"}

// WriteCompareCSV writes the comparison of rep's controllers as CSV, one
// row per controller and per comparison (CompareHeader).
func WriteCompareCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CompareHeader); err != nil {
		return err
	}
	for i := range rep.Controllers {
		for _, r := range rep.Controllers[i].Rows(rep.OPP) {
			row := []string{r.Controller, r.Kind, r.Setting, rep.SLO.Stat.String(),
				result.FormatFloat(r.M.Stat), result.FormatFloat(r.M.Savings),
				strconv.FormatInt(r.M.SavedPageWindows, 10), strconv.FormatInt(r.M.AlivePageWindows, 10),
				strconv.Itoa(r.M.BrokenWindows), strconv.Itoa(r.M.Windows), strconv.FormatBool(r.M.MeetsSLO), strconv.Itoa(r.Switches)}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// ctlPart returns controller i's result on a part (pooled over its
// segments) and the switches in it; part -1 counts every switch of the
// whole runs.
func ctlPart(ins []*input, i int, which int) (*result.Result, int) {
	var rs []*result.Result
	n := 0
	for _, in := range ins {
		c := in.ctl[i]
		if which < 0 {
			n += len(c.Switches)
			continue
		}
		for _, r := range [...][]Range{in.train, in.val, in.eval}[which] {
			rs = append(rs, c.Result.Restrict(r.First, r.Last+1))
			for _, sw := range c.Switches {
				if sw.Window >= r.First && sw.Window <= r.Last {
					n++
				}
			}
		}
	}
	if which < 0 {
		return nil, n
	}
	return pool(rs), n
}
