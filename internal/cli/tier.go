package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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

// isTierMetric reports whether --x names a tier metric (slowdown,
// max_slowdown) rather than a promotion-rate statistic.
func isTierMetric(x string) bool {
	_, ok := tier.ParseMetric(x)
	return ok
}

// checkX checks --x: a statistic, or with a tier a tier metric too.
func checkX(x string, withTier bool) error {
	if _, ok := result.ParseStat(x); ok {
		return nil
	}
	if isTierMetric(x) {
		if !withTier {
			return usagef("--x %s needs --tier", x)
		}
		return nil
	}
	if withTier {
		return usagef("--x %q: want max_pr, p99_pr, p98_pr, mean_pr, slowdown or max_slowdown", x)
	}
	return usagef("--x %q: want max_pr, p99_pr, p98_pr or mean_pr", x)
}

// xOf returns the x named by --x as a function of a result: a statistic,
// or a tier metric on t for a trace of the given window length.
func xOf(x string, t *tier.Tier, window time.Duration) func(*result.Result) float64 {
	if m, ok := tier.ParseMetric(x); ok {
		return t.Func(m, window)
	}
	st := result.Stat(x)
	return func(r *result.Result) float64 { return r.Stat(st) }
}

// xLabel names --x for an axis.
func xLabel(x string) string {
	switch x {
	case string(tier.Slowdown):
		return "slowdown (stall s per s)"
	case string(tier.MaxSlowdown):
		return "max slowdown (worst window)"
	}
	return strings.ReplaceAll(x, "_", " ")
}

// writeTierChoices prints writeChoices' table with the tier's numbers: the
// best setting of each policy at each target of --x (a statistic or a tier
// metric), its net savings and net saved bytes, stall time per window and
// slowdown.
func writeTierChoices(e *env, rs []*result.Result, x string, targets []float64, t *tier.Tier, window time.Duration) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\ttarget %s\tbest setting\tsavings\tnet savings\tnet saved\tpromotions\tstall/window\tslowdown\tmax slowdown\theadroom vs opp\n", x)
	for _, c := range result.ChooseBy(rs, xOf(x, t, window), targets) {
		tg := formatTarget(c.Target)
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
			100*c.Best.Savings(), 100*k.NetSavings, bytesIEC(k.NetAvgSavedBytes), c.Best.TotalPromotions(),
			seconds(k.StallSecondsPerWindow), percentG(k.Slowdown), percentG(k.MaxSlowdown), head)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.stdout, "tier %s: %s\n", t.Name, t.Source)
	return err
}

// tierPlotOptions draws net savings against --x (a statistic or a tier
// metric) on t.
func tierPlotOptions(o report.PlotOptions, x string, t *tier.Tier, window time.Duration) report.PlotOptions {
	o.XOf, o.XLabel = xOf(x, t, window), xLabel(x)
	o.YOf = func(r *result.Result) float64 { return t.Cost(r, window).NetSavings }
	o.YLabel = "net savings (% of alive page-windows)"
	if o.Title == "" {
		o.Title = "net of the " + t.Name + " tier's own memory"
	}
	return o
}

// percentG prints a fraction as a percentage with 4 significant digits.
func percentG(f float64) string { return strconv.FormatFloat(100*f, 'g', 4, 64) + "%" }

// bytesIEC prints a byte count with a binary unit ("1.5 GiB").
func bytesIEC(x float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", x, units[i])
}

// seconds prints a time in seconds with a readable unit ("2us", "1.5ms").
func seconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-6:
		return fmt.Sprintf("%.3gns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.3gus", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3gms", s*1e3)
	}
	return fmt.Sprintf("%.3gs", s)
}

// writeTierMPC is runMPC's output with --tier: the plot of net savings
// against --x, then CSV, JSON or the table, each with the tier's numbers.
func writeTierMPC(e *env, o mpcOptions, rs []*result.Result, targets []float64, t *tier.Tier, window time.Duration) error {
	if o.plot != "" {
		po := report.PlotOptions{LogX: o.logX, Targets: targets}
		if err := writePlot(o.plot, rs, tierPlotOptions(po, o.x, t, window)); err != nil {
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
	return writeTierChoices(e, rs, o.x, targets, t, window)
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
			trainNet, trainSlow = fmt.Sprintf("%.2f%%", 100*r.Train.NetSavings), percentG(r.Train.Slowdown)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2f%%\t%s\t%s\n", r.Policy, r.Params, trainNet, trainSlow,
			100*r.Eval.NetSavings, seconds(r.Eval.StallSecondsPerWindow), percentG(r.Eval.Slowdown))
	}
	return tw.Flush()
}
