package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"mdk/tier"
)

// TierWindow is one window of mdk agent compare --tier: the tier model's
// stall time beside what the replay workload measured.
type TierWindow struct {
	Window int `json:"window"`
	// ModelPredNS charges the tier's mean promotion latency to each
	// predicted promotion, ModelNS to each measured one.
	ModelPredNS float64 `json:"model_pred_stall_ns"`
	ModelNS     float64 `json:"model_stall_ns"`
	// SlowTouches and SlowNS are the workload's touches slower than its
	// threshold (swap-ins and first touches) and their total time.
	SlowTouches int64 `json:"slow_touches"`
	SlowNS      int64 `json:"slow_ns"`
}

// TierComparison is the tier section of mdk agent compare --tier
// (docs/tiers.md): the tier model's stall, window by window, beside the
// replay workload's measured slow touches. It is computed once by
// [CompareTier] and rendered by [Comparison.WriteTier] in each format.
type TierComparison struct {
	Tier    *tier.Tier   `json:"tier"`
	Windows []TierWindow `json:"windows"`
	Total   TierWindow   `json:"total"`
	// Promotions is the measured promotions; MeasuredPerSlowNS the
	// workload's mean slow-touch time (what the model's mean would be if
	// every slow touch were a promotion).
	Promotions        int64   `json:"promotions"`
	MeasuredPerSlowNS float64 `json:"measured_ns_per_slow_touch"`
	// Slowdowns over the run: the model's (predicted and measured
	// promotions) and the workload's (slow-touch time per second).
	ModelPredSlowdown float64  `json:"model_pred_slowdown"`
	ModelSlowdown     float64  `json:"model_slowdown"`
	MeasuredSlowdown  float64  `json:"measured_slowdown"`
	Explain           []string `json:"explain"`
}

// CompareTier puts the tier model's stall beside the workload's measured
// touch latencies of run dir (its measured.csv), window by window.
func CompareTier(dir string, c *Comparison, t *tier.Tier) (*TierComparison, error) {
	path := filepath.Join(dir, MeasuredFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	rows, err := ReadMeasured(f, path)
	f.Close()
	if err != nil {
		return nil, err
	}
	if len(rows) != len(c.Windows) {
		return nil, fmt.Errorf("%s: %d windows, the comparison has %d", path, len(rows), len(c.Windows))
	}
	window, err := time.ParseDuration(c.Info.Window)
	if err != nil || window <= 0 {
		return nil, fmt.Errorf("%s/run.json: window %q: want a positive duration", dir, c.Info.Window)
	}
	tc := &TierComparison{Tier: t}
	m := t.PromotionNs.Mean
	for w, d := range c.Windows {
		tw := TierWindow{Window: w, ModelPredNS: float64(d.PredPromotions) * m, ModelNS: float64(d.Promotions) * m,
			SlowTouches: rows[w].SlowTouches, SlowNS: rows[w].SlowNS}
		tc.Windows = append(tc.Windows, tw)
		tc.Total.Window++
		tc.Total.ModelPredNS += tw.ModelPredNS
		tc.Total.ModelNS += tw.ModelNS
		tc.Total.SlowTouches += tw.SlowTouches
		tc.Total.SlowNS += tw.SlowNS
		tc.Promotions += d.Promotions
	}
	run := float64(len(c.Windows)) * float64(window.Nanoseconds())
	if run > 0 {
		tc.ModelPredSlowdown = tc.Total.ModelPredNS / run
		tc.ModelSlowdown = tc.Total.ModelNS / run
		tc.MeasuredSlowdown = float64(tc.Total.SlowNS) / run
	}
	if tc.Total.SlowTouches > 0 {
		tc.MeasuredPerSlowNS = float64(tc.Total.SlowNS) / float64(tc.Total.SlowTouches)
	}
	ns, pct := tier.FormatNs, tier.FormatPercent
	tc.Explain = []string{
		fmt.Sprintf("tier %s charges %s per promotion (%s)", t.Name, ns(m), t.Source),
		fmt.Sprintf("model: %s stalled over the run for the predicted promotions (slowdown %s), %s for the %d measured ones (slowdown %s)",
			ns(tc.Total.ModelPredNS), pct(tc.ModelPredSlowdown), ns(tc.Total.ModelNS), tc.Promotions, pct(tc.ModelSlowdown)),
	}
	if tc.Total.SlowTouches == 0 {
		tc.Explain = append(tc.Explain, "measured: the run has no workload touch times (not a replay): nothing to set beside the model")
		return tc, nil
	}
	tc.Explain = append(tc.Explain,
		fmt.Sprintf("measured: the workload's %d slow touches (swap-ins and first touches) took %s (slowdown %s), %s each",
			tc.Total.SlowTouches, ns(float64(tc.Total.SlowNS)), pct(tc.MeasuredSlowdown), ns(tc.MeasuredPerSlowNS)),
		fmt.Sprintf("measured / model: %.3g (slow-touch time over the model's stall for the measured promotions); %d slow touches against %d promotions",
			float64(tc.Total.SlowNS)/max(tc.Total.ModelNS, 1), tc.Total.SlowTouches, tc.Promotions))
	return tc, nil
}

// WriteTier writes the comparison with its tier section tc in format
// (text, csv or json), each rendered once: the text after the comparison's
// table, CSV columns (model_pred_stall_ns, model_stall_ns, slow_touches,
// slow_ns) after the comparison's own in each row, JSON the comparison's
// object with a "tier_model" key last.
func (c *Comparison) WriteTier(w io.Writer, tc *TierComparison, format string) error {
	switch format {
	case "text":
		if err := c.WriteText(w); err != nil {
			return err
		}
		fmt.Fprint(w, "\nthe tier model beside the workload's touches:\n")
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "window\tmodel stall pred\tmodel stall meas\tslow touches\tslow touch time\t")
		row := func(name string, d TierWindow) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", name, tier.FormatNs(d.ModelPredNS), tier.FormatNs(d.ModelNS), d.SlowTouches, tier.FormatNs(float64(d.SlowNS)))
		}
		for _, d := range tc.Windows {
			row(strconv.Itoa(d.Window), d)
		}
		row("total", tc.Total)
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, line := range tc.Explain {
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		return c.writeCSV(w, []string{"model_pred_stall_ns", "model_stall_ns", "slow_touches", "slow_ns"}, func(i int) []string {
			d := tc.Windows[i]
			return []string{strconv.FormatFloat(d.ModelPredNS, 'g', -1, 64), strconv.FormatFloat(d.ModelNS, 'g', -1, 64),
				strconv.FormatInt(d.SlowTouches, 10), strconv.FormatInt(d.SlowNS, 10)}
		})
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			comparisonJSON
			TierModel *TierComparison `json:"tier_model"`
		}{c.jsonObject(), tc})
	}
	return fmt.Errorf("agent: format %q: want text, csv or json", format)
}
