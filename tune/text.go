package tune

import (
	"encoding/json"
	"fmt"
	"io"
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
	st := string(rep.SLO.Stat)
	bound := policy.FormatRate(rep.SLO.PPM)
	fmt.Fprintf(&b, "SLO %s; settings chosen on the train part, measured on the eval part.\n", rep.SLO)
	fmt.Fprintf(&b, "Policies run over whole traces; each part's metrics count only its windows.\n")
	writePart(&b, "train", rep.Train)
	writePart(&b, "eval", rep.Eval)
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\tsettings\tchosen on train\ttrain %s\ttrain savings\teval %s\teval savings\teval windows > %s\teval SLO\tOPP headroom\n", st, st, bound)
	for _, c := range rep.Policies {
		if !c.Found {
			fmt.Fprintf(tw, "%s\t%d\tnone meets the SLO\t-\t-\t-\t-\t-\t-\t-\n", c.Policy, c.Settings)
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
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", c.Policy, c.Settings, c.Params,
			pct(c.Train.Stat), pct(c.Train.Savings), pct(c.Eval.Stat), pct(c.Eval.Savings),
			c.Eval.BrokenWindows, c.Eval.Windows, verdict, head)
	}
	tw.Flush()
	b.WriteString("\n")
	if y := rep.OPP; y != nil {
		fmt.Fprintf(&b, "Yardstick: opp:%s, best of %d OPP settings chosen on the eval part itself (an oracle's optimum there, not a tuned setting): eval %s %s, eval savings %s.\n",
			y.Params, y.Settings, st, pct(y.Eval.Stat), pct(y.Eval.Savings))
	} else {
		fmt.Fprintf(&b, "Yardstick: no OPP setting meets %s on the eval part.\n", rep.SLO)
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
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

// pct formats a fraction as a percentage with two decimals.
func pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }
