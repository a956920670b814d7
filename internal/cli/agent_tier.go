package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"mdk/agent"
	"mdk/tier"
)

// tierWindow is one window of mdk agent compare --tier: the tier model's
// stall time beside what the replay workload measured.
type tierWindow struct {
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

// tierCompare is the tier section of mdk agent compare.
type tierCompare struct {
	Tier    *tier.Tier   `json:"tier"`
	Windows []tierWindow `json:"windows"`
	Total   tierWindow   `json:"total"`
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

// compareTier puts the tier model's stall beside the workload's measured
// touch latencies of run dir (its measured.csv), window by window.
func compareTier(dir string, c *agent.Comparison, t *tier.Tier) (*tierCompare, error) {
	path := filepath.Join(dir, agent.MeasuredFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	rows, err := agent.ReadMeasured(f, path)
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
	tc := &tierCompare{Tier: t}
	m := t.PromotionNs.Mean
	for w, d := range c.Windows {
		tw := tierWindow{Window: w, ModelPredNS: float64(d.PredPromotions) * m, ModelNS: float64(d.Promotions) * m,
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
	tc.Explain = []string{
		fmt.Sprintf("tier %s charges %s per promotion (%s)", t.Name, tier.FormatNs(m), t.Source),
		fmt.Sprintf("model: %s stalled over the run for the predicted promotions (slowdown %s), %s for the %d measured ones (slowdown %s)",
			tier.FormatNs(tc.Total.ModelPredNS), tier.FormatPercent(tc.ModelPredSlowdown), tier.FormatNs(tc.Total.ModelNS), tc.Promotions, tier.FormatPercent(tc.ModelSlowdown)),
	}
	if tc.Total.SlowTouches == 0 {
		tc.Explain = append(tc.Explain, "measured: the run has no workload touch times (not a replay): nothing to set beside the model")
		return tc, nil
	}
	tc.Explain = append(tc.Explain,
		fmt.Sprintf("measured: the workload's %d slow touches (swap-ins and first touches) took %s (slowdown %s), %s each",
			tc.Total.SlowTouches, tier.FormatNs(float64(tc.Total.SlowNS)), tier.FormatPercent(tc.MeasuredSlowdown), tier.FormatNs(tc.MeasuredPerSlowNS)),
		fmt.Sprintf("measured / model: %.3g (slow-touch time over the model's stall for the measured promotions); %d slow touches against %d promotions",
			float64(tc.Total.SlowNS)/max(tc.Total.ModelNS, 1), tc.Total.SlowTouches, tc.Promotions))
	return tc, nil
}

// writeTierComparison prints the comparison with its tier section: text
// after the comparison, CSV columns after its own, JSON a "tier_model" key.
func writeTierComparison(w io.Writer, c *agent.Comparison, tc *tierCompare, format string) error {
	var b bytes.Buffer
	if err := writeComparison(&b, c, format); err != nil {
		return err
	}
	switch format {
	case "text":
		b.WriteString("\nthe tier model beside the workload's touches:\n")
		tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "window\tmodel stall pred\tmodel stall meas\tslow touches\tslow touch time\t")
		row := func(name string, d tierWindow) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", name, tier.FormatNs(d.ModelPredNS), tier.FormatNs(d.ModelNS), d.SlowTouches, tier.FormatNs(float64(d.SlowNS)))
		}
		for _, d := range tc.Windows {
			row(strconv.Itoa(d.Window), d)
		}
		row("total", tc.Total)
		tw.Flush()
		for _, line := range tc.Explain {
			b.WriteString(line + "\n")
		}
	case "csv":
		recs, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
		if err != nil || len(recs) != len(tc.Windows)+1 {
			return fmt.Errorf("agent compare: CSV of %d rows for %d windows: %v", len(recs), len(tc.Windows), err)
		}
		recs[0] = append(recs[0], "model_pred_stall_ns", "model_stall_ns", "slow_touches", "slow_ns")
		for i, d := range tc.Windows {
			recs[i+1] = append(recs[i+1], strconv.FormatFloat(d.ModelPredNS, 'g', -1, 64), strconv.FormatFloat(d.ModelNS, 'g', -1, 64),
				strconv.FormatInt(d.SlowTouches, 10), strconv.FormatInt(d.SlowNS, 10))
		}
		b.Reset()
		cw := csv.NewWriter(&b)
		cw.WriteAll(recs)
		if err := cw.Error(); err != nil {
			return err
		}
	case "json":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b.Bytes(), &obj); err != nil {
			return err
		}
		raw, err := json.Marshal(tc)
		if err != nil {
			return err
		}
		obj["tier_model"] = raw
		b.Reset()
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
