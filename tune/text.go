package tune

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"mdk/policy"
)

// WriteJSON writes rep as indented JSON, without HTML escapes ("<=" stays
// readable).
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// WriteText writes rep as a table for a person: the SLO, which windows of
// which traces trained and evaluated, then one row per policy and the OPP
// yardstick.
func WriteText(w io.Writer, rep *Report) error {
	var b strings.Builder
	st := rep.SLO.Stat.String()
	bound := policy.FormatRate(rep.SLO.PPM)
	// A slowdown is often far below 0.01%: 4 significant digits.
	stat := func(m *Metrics) string {
		if rep.SLO.IsTier() && (m.Err == nil || m.Err.Stat == nil) {
			return strconv.FormatFloat(100*m.Stat, 'g', 4, 64) + "%"
		}
		return pctErr(m, true)
	}
	fmt.Fprintf(&b, "SLO %s; settings chosen on the train part, measured on the eval part.\n", rep.SLO)
	fmt.Fprintf(&b, "Policies run over whole traces; each part's metrics count only its windows.\n")
	if rep.Sample != "" {
		fmt.Fprintf(&b, "Sampled: %s; the statistic and savings are estimates, printed without error bounds:\n", rep.Sample)
		fmt.Fprintf(&b, "their bounds did not cover the exact values often enough (docs/bench.md, sampling).\n")
	}
	for _, w := range rep.SmallSamples {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	writePart(&b, "train", rep.Train)
	if len(rep.Validation.Segments) > 0 {
		writePart(&b, "valid", rep.Validation)
		fmt.Fprintf(&b, "        lopp's theta: of those meeting the SLO on train, the best on the valid windows,\n")
		fmt.Fprintf(&b, "        which its model must not be fitted on (mdk lopp train fits on the windows before them).\n")
	}
	writePart(&b, "eval", rep.Eval)
	b.WriteString("\n")
	if len(rep.Policies) > 0 { // controllers only: no fixed-policy table
		writePolicies(&b, rep, st, bound, stat)
		b.WriteString("\n")
	}
	if y := rep.OPP; y != nil {
		fmt.Fprintf(&b, "Yardstick: opp:%s, best of %d OPP settings chosen on the eval part itself (%s): eval %s %s, eval savings %s.\n",
			y.Params, y.Settings, rep.SLO.YardstickClaim(), st, stat(y.Eval), pctErr(y.Eval, false))
	} else {
		fmt.Fprintf(&b, "Yardstick: no OPP setting meets %s on the eval part.\n", rep.SLO)
	}
	writeControllers(&b, rep)
	for _, warn := range rep.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePolicies writes the table of the fixed policies' choices.
func writePolicies(b *strings.Builder, rep *Report, st, bound string, stat func(*Metrics) string) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\tsettings\tchosen on train\ttrain %s\ttrain savings\teval %s\teval savings\teval windows > %s\teval SLO\tOPP headroom\tnote\n", st, st, bound)
	for _, c := range rep.Policies {
		if !c.Found {
			fmt.Fprintf(tw, "%s\t%d\tnone meets the SLO\t-\t-\t-\t-\t-\t-\t-\t%s\n", c.Policy, c.Settings, noneNote(c))
			continue
		}
		verdict := "met"
		if !c.Eval.MeetsSLO {
			verdict = "BROKEN"
		}
		head := "-"
		if c.HasOPPHeadroom {
			head = fmt.Sprintf("%+.2f pts", 100*c.OPPHeadroom)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", c.Policy, c.Settings, c.Params,
			stat(c.Train), pctErr(c.Train, false), stat(c.Eval), pctErr(c.Eval, false),
			c.Eval.BrokenWindows, c.Eval.Windows, verdict, head, c.Note(st))
	}
	tw.Flush()
}

// Note is what the text and HTML tables say beside a choice: on which
// windows L-OPP's theta was chosen, and whether the setting drifts.
func (c Choice) Note(stat string) string {
	var notes []string
	if c.Validation != nil {
		notes = append(notes, fmt.Sprintf("chosen on valid: %s %s, savings %s", stat, pct(c.Validation.Stat), pct(c.Validation.Savings)))
	}
	if c.Drift != nil {
		notes = append(notes, c.Drift.String())
	}
	if len(notes) == 0 {
		return "-"
	}
	return strings.Join(notes, "; ")
}

func noneNote(c Choice) string {
	if c.ChosenOn == "validation" {
		return "no theta meets it on both the train and the valid windows"
	}
	return "-"
}

func writePart(b *strings.Builder, name string, p Part) {
	if len(p.Segments) == 1 {
		fmt.Fprintf(b, "%-6s %s\n", name+":", p.Segments[0])
		return
	}
	fmt.Fprintf(b, "%-6s %d windows pooled from:\n", name+":", p.Windows)
	for _, s := range p.Segments {
		fmt.Fprintf(b, "         %s\n", s)
	}
}

// pctErr formats a part's statistic (or its savings) as pct does, with
// its error bound on a sample where one is printed.
func pctErr(m *Metrics, stat bool) string {
	v := m.Savings
	var e *float64
	if m.Err != nil {
		e = m.Err.Savings
	}
	if stat {
		v = m.Stat
		if m.Err != nil {
			e = m.Err.Stat
		}
	}
	if e == nil {
		return pct(v)
	}
	return fmt.Sprintf("%s ±%.2f", pct(v), 100**e)
}

// pct formats a fraction as a percentage with two decimals.
func pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }
