package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"mdk/report"
	"mdk/result"
	"mdk/tier"
	"mdk/tune"
)

// tierUsage is the help of --tier on every command that takes it.
const tierUsage = "far tier `NAME|FILE`: a built-in tier (" + "cxl, ssd, zram, zswap" + ") or a tier file from mdk calibrate; " +
	"adds net saved bytes, stall time and slowdown (docs/tiers.md)"

// loadTier loads --tier ("" means none).
func loadTier(s string) (*tier.Tier, error) {
	if s == "" {
		return nil, nil
	}
	t, err := tier.Load(s)
	if err != nil {
		return nil, fmt.Errorf("--tier: %w", err)
	}
	return t, nil
}

// setSLOTier gives an SLO on a tier metric (slowdown, max_slowdown) its
// tier, or refuses it without --tier.
func setSLOTier(slo *tune.SLO, t *tier.Tier) error {
	if !slo.IsTier() {
		return nil
	}
	if t == nil {
		return usagef("--slo %s is on the tier model's slowdown estimate: it needs --tier (a built-in tier such as zram, or a file from mdk calibrate)", slo)
	}
	slo.Tier = t
	return nil
}

// parseX parses --x: a statistic, or with a tier a tier metric too.
func parseX(x string, withTier bool) (tier.Axis, error) {
	a, ok := tier.ParseAxis(x)
	switch {
	case ok && a.IsTier() && !withTier:
		return tier.Axis{}, usagef("--x %s needs --tier", x)
	case ok:
		return a, nil
	case withTier:
		return tier.Axis{}, usagef("--x %q: want max_pr, p99_pr, p98_pr, mean_pr, slowdown or max_slowdown", x)
	}
	return tier.Axis{}, usagef("--x %q: want max_pr, p99_pr, p98_pr or mean_pr", x)
}

// tierPlotOptions draws net savings against --x (a statistic or a tier
// metric) on t.
func tierPlotOptions(o report.PlotOptions, x tier.Axis, t *tier.Tier, window time.Duration) report.PlotOptions {
	o.XOf, o.XLabel = x.Func(t, window), x.Label()
	o.YOf = func(r *result.Result) float64 { return t.Cost(r, window).NetSavings }
	o.YLabel = "net savings (% of alive page-windows)"
	if o.Title == "" {
		o.Title = "net of the " + t.Name + " tier's own memory"
	}
	return o
}

// writeTierMPC is runMPC's output with --tier: the plot of net savings
// against --x, then CSV, JSON or the table, each with the tier's numbers.
func writeTierMPC(e *env, o mpcOptions, rs []*result.Result, x tier.Axis, targets []float64, t *tier.Tier, window time.Duration) error {
	if o.plot != "" {
		po := report.PlotOptions{LogX: o.logX, Targets: targets}
		if err := writePlot(o.plot, rs, tierPlotOptions(po, x, t, window)); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "mdk: wrote %s\n", o.plot)
	}
	switch {
	case o.csv:
		return t.WriteCSV(e.stdout, rs, window)
	case o.json:
		return t.WriteJSON(e.stdout, rs, window)
	}
	return report.WriteBestTable(e.stdout, rs, report.TableOptions{X: x, Targets: targets, Tier: t, Window: window})
}

// tuneTier is a tuned setting's cost on the tier, per part. The parts pool
// windows of several segments, so there is no page size or worst window:
// net savings, stall per window and slowdown only.
type tuneTier struct {
	NetSavings            float64 `json:"net_savings"`
	StallSecondsPerWindow float64 `json:"stall_seconds_per_window"`
	Slowdown              float64 `json:"slowdown"`
}

type tuneTierRow struct {
	Policy string    `json:"policy"`
	Params string    `json:"params"`
	Train  *tuneTier `json:"train"`
	Eval   *tuneTier `json:"eval"`
}

func tuneCost(t *tier.Tier, m *tune.Metrics, window time.Duration) *tuneTier {
	c := t.CostOf(tier.Counts{Saved: m.SavedPageWindows, Alive: m.AlivePageWindows, Promotions: m.Promotions, Windows: m.Windows}, window)
	return &tuneTier{NetSavings: c.NetSavings, StallSecondsPerWindow: c.StallSecondsPerWindow, Slowdown: c.Slowdown}
}

// writeTierTune prints mdk tune's report and each chosen setting's (and the
// yardstick's) net savings, stall per window and slowdown on the tier; as
// JSON, the report's keys plus "tier" and "tier_costs".
func writeTierTune(e *env, rep *tune.Report, t *tier.Tier, asJSON bool) error {
	window := time.Duration(rep.Window)
	var rows []tuneTierRow
	for _, c := range rep.Policies {
		if c.Found {
			rows = append(rows, tuneTierRow{Policy: c.Policy, Params: c.Params, Train: tuneCost(t, c.Train, window), Eval: tuneCost(t, c.Eval, window)})
		}
	}
	if y := rep.OPP; y != nil {
		rows = append(rows, tuneTierRow{Policy: "opp (yardstick)", Params: y.Params, Eval: tuneCost(t, y.Eval, window)})
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(&struct {
			*tune.Report
			Tier      *tier.Tier    `json:"tier"`
			TierCosts []tuneTierRow `json:"tier_costs"`
		}{rep, t, rows})
	}
	if err := tune.WriteText(e.stdout, rep); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nOn the %s tier (%s):\n", t.Name, t.Source)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\tsetting\ttrain net savings\ttrain slowdown\teval net savings\teval stall/window\teval slowdown\n")
	for _, r := range rows {
		trainNet, trainSlow := "-", "-"
		if r.Train != nil {
			trainNet, trainSlow = fmt.Sprintf("%.2f%%", 100*r.Train.NetSavings), tier.FormatPercent(r.Train.Slowdown)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f%%\t%s\t%s\n", r.Policy, r.Params, trainNet, trainSlow,
			100*r.Eval.NetSavings, tier.FormatSeconds(r.Eval.StallSecondsPerWindow), tier.FormatPercent(r.Eval.Slowdown))
	}
	return tw.Flush()
}
