package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"mdk/policy"
	"mdk/result"
	"mdk/tier"
	"mdk/trace"
)

// TableOptions choose the best-setting table of mdk mpc ([WriteBestTable]).
type TableOptions struct {
	// X is what the targets are on: a statistic, or with Tier a tier
	// metric.
	X       tier.Axis
	Targets []float64 // fractions
	// Tier, if set, adds its columns (net savings, net saved bytes, stall
	// per window, slowdown, max slowdown); Window is the trace's window
	// length, which they need.
	Tier   *tier.Tier
	Window time.Duration
}

// WriteBestTable writes the best setting of each policy at each target
// (the most savings with X at or below the target: [result.Choose], or
// [result.ChooseBy] on a tier) with its headroom against OPP at the same
// target: mdk mpc's table, the one every command prints. On a sample each
// estimate has its error bound, or "(no bound)" where none is printed
// ([result.Result.PrintedBound]; callers print [SampleNote] above the
// table); with a tier, the tier's columns and a last line naming the
// tier's source.
func WriteBestTable(w io.Writer, rs []*result.Result, o TableOptions) error {
	if o.Tier != nil {
		return writeTierTable(w, rs, o)
	}
	st := o.X.Stat
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\ttarget %s\tbest setting\tsavings\t%s\tpromotions\theadroom vs opp\n", st, st)
	for _, c := range result.Choose(rs, st, o.Targets) {
		t := FormatTarget(c.Target)
		if c.Best == nil {
			fmt.Fprintf(tw, "%s\t%s\t(none meets it)\t\t\t\t\n", c.Policy, t)
			continue
		}
		head := "-"
		if c.HasHeadroom {
			head = fmt.Sprintf("%+.2f pts", 100*c.Headroom)
		}
		b := c.Best
		if !b.Sampled() {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f%%\t%.4f%%\t%d\t%s\n", c.Policy, t, b.Params,
				100*b.Savings(), 100*b.Stat(st), b.TotalPromotions(), head)
			continue
		}
		if c.HasHeadroom {
			head = fmt.Sprintf("%+.2f pts (no bound)", 100*c.Headroom)
			if e, ok := c.PrintedHeadroomBound(); ok {
				head = fmt.Sprintf("%+.2f pts ±%.2f", 100*c.Headroom, 100*e)
			}
		}
		stat, _ := result.MetricByName(string(st))
		sav, _ := result.MetricByName("savings")
		prom, _ := result.MetricByName("promotions")
		pm := func(m result.Metric, scale float64, prec int) string {
			if e, ok := b.PrintedBound(m); ok {
				return fmt.Sprintf(" ±%.*f", prec, scale*e)
			}
			return " (no bound)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f%%%s\t%.4f%%%s\t%d%s\t%s\n", c.Policy, t, b.Params,
			100*b.Savings(), pm(sav, 100, 2), 100*b.Stat(st), pm(stat, 100, 4), b.TotalPromotions(), pm(prom, 1, 0), head)
	}
	return tw.Flush()
}

// writeTierTable is WriteBestTable with a tier: its net savings and net
// saved bytes, stall time per window and slowdowns.
func writeTierTable(w io.Writer, rs []*result.Result, o TableOptions) error {
	t, window := o.Tier, o.Window
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\ttarget %s\tbest setting\tsavings\tnet savings\tnet saved\tpromotions\tstall/window\tslowdown\tmax slowdown\theadroom vs opp\n", o.X)
	for _, c := range result.ChooseBy(rs, o.X.Func(t, window), o.Targets) {
		tg := FormatTarget(c.Target)
		if c.Best == nil {
			fmt.Fprintf(tw, "%s\t%s\t(none meets it)\t\t\t\t\t\t\t\t\n", c.Policy, tg)
			continue
		}
		head := "-"
		if c.HasHeadroom {
			head = fmt.Sprintf("%+.2f pts", 100*c.Headroom)
		}
		k := t.Cost(c.Best, window)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f%%\t%.2f%%\t%s\t%d\t%s\t%s\t%s\t%s\n", c.Policy, tg, c.Best.Params,
			100*c.Best.Savings(), 100*k.NetSavings, tier.FormatBytes(k.NetAvgSavedBytes), c.Best.TotalPromotions(),
			tier.FormatSeconds(k.StallSecondsPerWindow), tier.FormatPercent(k.Slowdown), tier.FormatPercent(k.MaxSlowdown), head)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "tier %s: %s\n", t.Name, t.Source)
	return err
}

// FormatTarget formats a target fraction as a rate: 0.005 is "0.5%".
func FormatTarget(t float64) string { return policy.FormatRate(int64(t*policy.MaxPPM + 0.5)) }

// SampleNote is the line that says how a sampled run's numbers were
// estimated, for the text outputs ("" for an exact run).
func SampleNote(rs []*result.Result) string {
	if len(rs) == 0 || !rs[0].Sampled() {
		return ""
	}
	r := rs[0]
	return fmt.Sprintf("sampled: %s of the pages; counts are the sample's x %d, rates the sample's own; ± is a 95%% bound from %d sub-samples (docs/bench.md, sampling)\n",
		trace.FormatPPM(r.SamplePPM), 1_000_000/r.SamplePPM, len(r.Groups))
}
