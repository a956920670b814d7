package agent

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// WindowDiff is one window of the side-by-side: predicted beside measured,
// and the difference split by cause. For promotions and saved page-windows
// alike, measured = predicted - refused - skipped - back + residual:
//
//   - Refused*: what the gaps the policy decided and the kernel refused
//     (pages still present after MADV_PAGEOUT) would have saved or cost;
//   - Skipped*: the same for the pages the safety limits kept (dry run,
//     SLO guard, PSI backoff, page limit, swap floor, a target gone);
//   - Back*: the same for pages the agent put out that came back without an
//     access in the trace (a swapoff, swap readahead), from the window
//     before they were found present;
//   - Residual*: what none of these explains: tracker slack (accesses the tracker
//     saw at another time than the kernel did, pages it did not see). A
//     replay has none.
//
// Pages the kernel swapped by itself are outside the model and counted
// apart (KernelOut, KernelIn), as are pages the agent put out that came
// back without an access in the trace (SwapInOther).
type WindowDiff struct {
	Window   int   `json:"window"`
	Accessed int64 `json:"accessed"`

	PredDecided    int64 `json:"pred_decided"`
	Decided        int64 `json:"decided"`
	PredPromotions int64 `json:"pred_promotions"`
	Promotions     int64 `json:"promotions"`
	PredSaved      int64 `json:"pred_saved"`
	Saved          int64 `json:"saved"`

	Refused            int64 `json:"refused"` // pages refused in this window
	RefusedPromotions  int64 `json:"refused_promotions"`
	RefusedSaved       int64 `json:"refused_saved"`
	SkippedPromotions  int64 `json:"skipped_promotions"`
	SkippedSaved       int64 `json:"skipped_saved"`
	BackPromotions     int64 `json:"back_promotions"`
	BackSaved          int64 `json:"back_saved"`
	ResidualPromotions int64 `json:"residual_promotions"`
	ResidualSaved      int64 `json:"residual_saved"`

	KernelOut   int64 `json:"kernel_out"`
	KernelIn    int64 `json:"kernel_in"`
	SwapInOther int64 `json:"swapin_other"`
}

// Comparison is a run's side-by-side.
type Comparison struct {
	Info      RunInfo
	Windows   []WindowDiff
	Total     WindowDiff // sums; Window is the number of windows
	Predicted *result.Result
	Measured  *result.Result
	// Cross-checks over the run (-1: the kernel does not have them).
	MajFlt, PswpIn, PswpOut, RefaultAnon int64
	// What the workload felt (replay): slow touches and their total time.
	SlowTouches, SlowNS int64
	// Skips and refusals by cause, over the run.
	Causes map[string]int64
	// Memory is the run's memory as the kernel counts it, per window.
	Memory Memory

	trace *trace.Trace // the observed trace
}

// Compare reads the run directory dir, runs the simulator with setting s on
// the trace the agent observed, and sets the prediction beside what the
// agent measured, window by window.
func Compare(dir string, s policy.Setting) (*Comparison, error) {
	return compare(dir, func(t *trace.Trace) (*result.Result, []int64, error) {
		decided := make([]int64, len(t.Windows))
		pred := sim.RunObserved(t, s, func(_ uint32, _, at int) { decided[at]++ })
		return pred, decided, nil
	})
}

// CompareControlled is [Compare] for a run decided by a controller
// ([Controlled]): the prediction is sim.RunControlled of c on the observed
// trace.
func CompareControlled(dir string, c policy.Controller) (*Comparison, error) {
	return compare(dir, func(t *trace.Trace) (*result.Result, []int64, error) {
		run, err := sim.RunControlled(context.Background(), t, c)
		if err != nil {
			return nil, nil, err
		}
		return run.Result, run.Decided, nil
	})
}

// compare is Compare with the prediction and the pages decided per window
// made by predict from the observed trace.
func compare(dir string, predict func(t *trace.Trace) (*result.Result, []int64, error)) (*Comparison, error) {
	run, err := ReadRun(dir)
	if err != nil {
		return nil, err
	}
	info, t, rows, skips := run.Info, run.Trace, run.Rows, run.skips
	W := len(t.Windows)

	pred, decided, err := predict(t)
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{Info: info, Predicted: pred, Causes: map[string]int64{}, trace: t}
	meas := &result.Result{
		Policy: pred.Policy, Params: pred.Params, PageSize: pred.PageSize,
		Promotions: make([]int64, W), Accessed: pred.Accessed,
		SavedPerWindow: make([]int64, W), AlivePerWindow: make([]int64, W),
	}
	cmp.Measured = meas

	// The effect of every gap decided but not reclaimed.
	ev := lives(sim.TraceGaps(t))
	refProm, refSaved := make([]int64, W+1), make([]int64, W+1)
	skProm, skSaved := make([]int64, W+1), make([]int64, W+1)
	bkProm, bkSaved := make([]int64, W+1), make([]int64, W+1)
	refused := make([]int64, W)
	for _, sk := range skips {
		cmp.Causes[sk.cause]++
		prom, saved := refProm, refSaved
		switch {
		case strings.HasPrefix(sk.cause, "refused"):
			refused[sk.window]++
		case sk.cause == CauseBack:
			prom, saved = bkProm, bkSaved
		default:
			prom, saved = skProm, skSaved
		}
		j, end := ev.after(sk.page, sk.window, W)
		if j >= 0 {
			prom[j]++
		}
		// saved in windows window+1 .. end-1, as a difference array
		if sk.window+1 < end {
			saved[sk.window+1]++
			saved[end]--
		}
	}
	var rs, ss, bs int64
	cmp.MajFlt, cmp.PswpIn, cmp.PswpOut, cmp.RefaultAnon = 0, 0, 0, 0
	for w := range W {
		rs += refSaved[w]
		ss += skSaved[w]
		bs += bkSaved[w]
		r := &rows[w]
		d := WindowDiff{
			Window: w, Accessed: pred.Accessed[w],
			PredDecided: decided[w], Decided: r.Decided,
			PredPromotions: pred.Promotions[w], Promotions: r.Promotions,
			PredSaved: pred.SavedPerWindow[w], Saved: r.Saved,
			Refused:           refused[w],
			RefusedPromotions: refProm[w], RefusedSaved: rs,
			SkippedPromotions: skProm[w], SkippedSaved: ss,
			BackPromotions: bkProm[w], BackSaved: bs,
			KernelOut: r.KernelOut, KernelIn: r.KernelIn, SwapInOther: r.SwapInOther,
		}
		d.ResidualPromotions = d.Promotions - (d.PredPromotions - d.RefusedPromotions - d.SkippedPromotions - d.BackPromotions)
		d.ResidualSaved = d.Saved - (d.PredSaved - d.RefusedSaved - d.SkippedSaved - d.BackSaved)
		cmp.Windows = append(cmp.Windows, d)
		meas.Promotions[w] = r.Promotions
		meas.SavedPerWindow[w] = r.Saved
		meas.Saved += r.Saved
		meas.AlivePerWindow[w] = pred.AlivePerWindow[w]
		meas.Alive += pred.AlivePerWindow[w]
		addCounter(&cmp.MajFlt, r.MajFlt)
		addCounter(&cmp.PswpIn, r.PswpIn)
		addCounter(&cmp.PswpOut, r.PswpOut)
		addCounter(&cmp.RefaultAnon, r.RefaultAnon)
		cmp.SlowTouches += r.SlowTouches
		cmp.SlowNS += r.SlowNS
		t := &cmp.Total
		t.Window++
		t.Accessed += d.Accessed
		t.PredDecided += d.PredDecided
		t.Decided += d.Decided
		t.PredPromotions += d.PredPromotions
		t.Promotions += d.Promotions
		t.PredSaved += d.PredSaved
		t.Saved += d.Saved
		t.Refused += d.Refused
		t.RefusedPromotions += d.RefusedPromotions
		t.RefusedSaved += d.RefusedSaved
		t.SkippedPromotions += d.SkippedPromotions
		t.SkippedSaved += d.SkippedSaved
		t.BackPromotions += d.BackPromotions
		t.BackSaved += d.BackSaved
		t.ResidualPromotions += d.ResidualPromotions
		t.ResidualSaved += d.ResidualSaved
		t.KernelOut += d.KernelOut
		t.KernelIn += d.KernelIn
		t.SwapInOther += d.SwapInOther
	}
	cmp.Memory = memoryOf(rows, pred.AlivePerWindow, pred.PageSize)
	return cmp, nil
}

// addCounter adds v to *sum; a -1 anywhere makes the sum -1 (not available).
func addCounter(sum *int64, v int64) {
	if *sum < 0 || v < 0 {
		*sum = -1
		return
	}
	*sum += v
}

// WriteText writes the side-by-side as a table within about 100 columns
// (each predicted/measured pair in one cell; the kernel's own reclaim, in
// the CSV, is in the explanation when there is any), the totals with the PR statistics
// as percentages, and the explanation of each difference. CSV and JSON
// keep every column apart and full precision.
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "setting %s, %d windows of %s (%s tracker, kernel %s)\n", c.Info.Setting, len(c.Windows), c.Info.Window, c.Info.Tracker, c.Info.Kernel)
	fmt.Fprintln(tw, "window\taccessed\tdecided\tpromotions\tsaved\trefused\tby refused\tby limits\tresidual\t")
	fmt.Fprintln(tw, "\t\tpred/meas\tpred/meas\tpred/meas\tpages\tprom/saved\tprom/saved\tprom/saved\t")
	pair := func(a, b int64) string { return strconv.FormatInt(a, 10) + "/" + strconv.FormatInt(b, 10) }
	row := func(name string, d WindowDiff) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", name, d.Accessed,
			pair(d.PredDecided, d.Decided), pair(d.PredPromotions, d.Promotions), pair(d.PredSaved, d.Saved), d.Refused,
			pair(d.RefusedPromotions, d.RefusedSaved), pair(d.SkippedPromotions, d.SkippedSaved),
			pair(d.ResidualPromotions, d.ResidualSaved))
	}
	for _, d := range c.Windows {
		row(strconv.Itoa(d.Window), d)
	}
	row("total", c.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	p, m := c.Predicted, c.Measured
	fmt.Fprintf(w, "\n%-16s %12s %12s\n", "", "predicted", "measured")
	count := func(n int64) string { return strconv.FormatInt(n, 10) }
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 4, 64) + "%" }
	for _, s := range [][3]string{
		{"promotions", count(p.TotalPromotions()), count(m.TotalPromotions())},
		{"saved", count(p.Saved), count(m.Saved)},
		{"max_pr", pct(p.MaxPR()), pct(m.MaxPR())},
		{"p99_pr", pct(p.Percentile(99)), pct(m.Percentile(99))},
		{"mean_pr", pct(p.MeanPR()), pct(m.MeanPR())},
		{"savings", pct(p.Savings()), pct(m.Savings())},
	} {
		fmt.Fprintf(w, "%-16s %12s %12s\n", s[0], s[1], s[2])
	}
	fmt.Fprintln(w)
	if err := c.Memory.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, line := range c.Explain() {
		fmt.Fprint(w, wrap(line, textWidth))
	}
	return nil
}

// textWidth is the width of the text side-by-side.
const textWidth = 100

// wrap breaks s at spaces into lines of at most width characters (a
// longer word stands alone), the continuation lines indented by two.
func wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(word) > width:
			b.WriteString("\n  ")
			n = 2
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	b.WriteByte('\n')
	return b.String()
}

// Explain says, in sentences, where measured and predicted differ and why.
func (c *Comparison) Explain() []string {
	t := c.Total
	var out []string
	if t.PredDecided != t.Decided {
		out = append(out, fmt.Sprintf("decisions: the agent decided %d pages, the simulator %d: the agent's decisions did not follow the observed trace", t.Decided, t.PredDecided))
	} else {
		out = append(out, fmt.Sprintf("decisions: %d pages decided, as the simulator decides on the observed trace", t.Decided))
	}
	var causes []string
	for k, n := range c.Causes {
		causes = append(causes, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(causes)
	if len(causes) > 0 {
		out = append(out, "not reclaimed: "+strings.Join(causes, ", "))
	}
	dp, ds := t.Promotions-t.PredPromotions, t.Saved-t.PredSaved
	out = append(out, fmt.Sprintf("promotions: measured - predicted = %d = -%d (refused pages) - %d (safety limits) - %d (swapped back in) + %d (residual)",
		dp, t.RefusedPromotions, t.SkippedPromotions, t.BackPromotions, t.ResidualPromotions))
	out = append(out, fmt.Sprintf("saved page-windows: measured - predicted = %d = -%d (refused pages) - %d (safety limits) - %d (swapped back in) + %d (residual)",
		ds, t.RefusedSaved, t.SkippedSaved, t.BackSaved, t.ResidualSaved))
	exact := 0
	for _, d := range c.Windows {
		if d.ResidualPromotions == 0 && d.ResidualSaved == 0 {
			exact++
		}
	}
	out = append(out, fmt.Sprintf("windows fully explained (residual 0): %d of %d", exact, len(c.Windows)))
	if t.ResidualPromotions != 0 || t.ResidualSaved != 0 {
		out = append(out, "residual: tracker slack: accesses the tracker saw in another window than the kernel did, or did not see")
	}
	if t.KernelOut > 0 || t.KernelIn > 0 || t.SwapInOther > 0 {
		out = append(out, fmt.Sprintf("outside the model: %d page-windows out by the kernel's own reclaim, %d kernel swap-ins, %d swap-ins of agent pages without a traced access",
			t.KernelOut, t.KernelIn, t.SwapInOther))
	}
	out = append(out, fmt.Sprintf("cross-check: %d promotions + %d other swap-ins + %d kernel swap-ins measured; major faults of the targets %s; pswpin (system) %s; pswpout (system) %s; workingset_refault_anon (cgroup) %s",
		t.Promotions, t.SwapInOther, t.KernelIn, counter(c.MajFlt), counter(c.PswpIn), counter(c.PswpOut), counter(c.RefaultAnon)))
	if c.SlowTouches > 0 {
		out = append(out, fmt.Sprintf("the workload: %d slow touches (>= 1.5us: swap-ins and first touches), %.1f us each on average",
			c.SlowTouches, float64(c.SlowNS)/float64(c.SlowTouches)/1e3))
	}
	return out
}

func counter(v int64) string {
	if v < 0 {
		return "n/a"
	}
	return strconv.FormatInt(v, 10)
}

// WriteCSV writes the per-window side-by-side as CSV.
func (c *Comparison) WriteCSV(w io.Writer) error { return c.writeCSV(w, nil, nil) }

// writeCSV writes the comparison's CSV, each row followed by more(i)'s
// columns for window i (named by extra, after the comparison's own), when
// more is set.
func (c *Comparison) writeCSV(w io.Writer, extra []string, more func(i int) []string) error {
	cw := csv.NewWriter(w)
	cw.Write(append([]string{"window", "accessed", "pred_decided", "decided", "pred_promotions", "promotions", "pred_saved", "saved",
		"refused", "refused_promotions", "refused_saved", "skipped_promotions", "skipped_saved", "back_promotions", "back_saved",
		"residual_promotions", "residual_saved", "kernel_out", "kernel_in", "swapin_other"}, append(slices.Clone(memoryColumns), extra...)...))
	for i, d := range c.Windows {
		rec := []int64{int64(d.Window), d.Accessed, d.PredDecided, d.Decided, d.PredPromotions, d.Promotions, d.PredSaved, d.Saved,
			d.Refused, d.RefusedPromotions, d.RefusedSaved, d.SkippedPromotions, d.SkippedSaved, d.BackPromotions, d.BackSaved,
			d.ResidualPromotions, d.ResidualSaved, d.KernelOut, d.KernelIn, d.SwapInOther}
		s := make([]string, len(rec))
		for j, v := range rec {
			s[j] = strconv.FormatInt(v, 10)
		}
		s = append(s, c.Memory.csv(i)...)
		if more != nil {
			s = append(s, more(i)...)
		}
		cw.Write(s)
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the comparison as one JSON object: the setting, the
// totals, the PR statistics of both sides, the explanation and the windows.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c.jsonObject())
}

// comparisonJSON is the object [Comparison.WriteJSON] writes.
type comparisonJSON struct {
	Setting     string             `json:"setting"`
	Window      string             `json:"window"`
	Tracker     string             `json:"tracker"`
	Kernel      string             `json:"kernel"`
	Predicted   map[string]float64 `json:"predicted"`
	Measured    map[string]float64 `json:"measured"`
	Total       WindowDiff         `json:"total"`
	Causes      map[string]int64   `json:"causes"`
	MajFlt      int64              `json:"majflt"`
	PswpIn      int64              `json:"pswpin"`
	PswpOut     int64              `json:"pswpout"`
	RefaultAnon int64              `json:"refault_anon"`
	Memory      Memory             `json:"memory"`
	Explain     []string           `json:"explain"`
	Windows     []WindowDiff       `json:"windows"`
}

func (c *Comparison) jsonObject() comparisonJSON {
	stats := resultStats
	return comparisonJSON{c.Info.Setting, c.Info.Window, c.Info.Tracker, c.Info.Kernel, stats(c.Predicted), stats(c.Measured),
		c.Total, c.Causes, c.MajFlt, c.PswpIn, c.PswpOut, c.RefaultAnon, c.Memory, c.Explain(), c.Windows}
}

// resultStats is a result's totals and PR statistics, as the JSON outputs
// give them.
func resultStats(r *result.Result) map[string]float64 {
	return map[string]float64{
		"promotions": float64(r.TotalPromotions()), "saved": float64(r.Saved),
		"max_pr": r.MaxPR(), "p99_pr": r.Percentile(99), "p98_pr": r.Percentile(98),
		"mean_pr": r.MeanPR(), "savings": r.Savings(),
	}
}
