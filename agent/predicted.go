package agent

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// This file is `mdk agent compare RUN --predicted-from RECORDING`: the
// prediction an engineer read off an earlier recording's curve, set beside
// the counterfactual (the simulator on the trace observed during the run,
// [Compare]) and the measurement, with the difference between the first and
// the last split into causes that add up window by window (docs/agent.md,
// "Predicted from a recording").

// Pair is one count of promotions and one of saved page-windows.
type Pair struct {
	Promotions int64 `json:"promotions"`
	Saved      int64 `json:"saved"`
}

func (p Pair) add(q Pair) Pair { return Pair{p.Promotions + q.Promotions, p.Saved + q.Saved} }
func (p Pair) sub(q Pair) Pair { return Pair{p.Promotions - q.Promotions, p.Saved - q.Saved} }
func (p Pair) neg() Pair       { return Pair{-p.Promotions, -p.Saved} }

// PredictedWindow is one window of the run (or the total) in the three-way
// side-by-side. For promotions and saved page-windows alike,
//
//	Recorded - Measured = Shift + Workload + Refused + Limits + Back + Slack
//
// where, with d the run's alignment offset and rec(k) the simulator's
// count on the recording in recording window k (0 outside it):
//
//   - Recorded = rec(w): what the recording's curve said for window w;
//   - Aligned = rec(w+d): the same, the recording moved by d windows;
//   - Shift = rec(w) - rec(w+d): the part due to the time shift;
//   - Workload = rec(w+d) - Counterfactual: the part due to the workload
//     itself (the two traces differ once aligned);
//   - Counterfactual: the simulator on the trace observed during the run
//     ([WindowDiff]'s Pred*);
//   - Refused, Limits, Back: the effect of the pages the kernel refused, the
//     safety limits kept, and that came back without an access
//     ([WindowDiff]'s Refused*, Skipped*, Back*);
//   - Slack = -Residual: tracker slack ([WindowDiff]'s Residual*).
type PredictedWindow struct {
	Window int `json:"window"`
	// Pages accessed in recording window w and in run window w.
	RecAccessed int64 `json:"rec_accessed"`
	Accessed    int64 `json:"accessed"`
	// Jaccard of the accessed sets of recording window w and run window w
	// (pages are the same when their space and page number are); 1 when
	// both are empty. In the total: the pooled ratio over all windows.
	Jaccard float64 `json:"jaccard"`
	// The same with recording window w+d.
	JaccardAligned float64 `json:"jaccard_aligned"`

	Recorded       Pair `json:"recorded"`
	Aligned        Pair `json:"aligned"`
	Counterfactual Pair `json:"counterfactual"`
	Measured       Pair `json:"measured"`

	Shift    Pair `json:"shift"`
	Workload Pair `json:"workload"`
	Refused  Pair `json:"refused"`
	Limits   Pair `json:"limits"`
	Back     Pair `json:"back"`
	Slack    Pair `json:"slack"`
}

// Causes returns the sum of the causes: Recorded - Measured when the
// identity holds.
func (p PredictedWindow) Causes() Pair {
	return p.Shift.add(p.Workload).add(p.Refused).add(p.Limits).add(p.Back).add(p.Slack)
}

// Predicted is a run's three-way side-by-side.
type Predicted struct {
	Cmp       *Comparison    // the counterfactual beside the measurement
	Recording string         // the recording's path, as given
	Recorded  *result.Result // the simulator on the recording with the run's setting
	Offset    int            // d: run window w is aligned with recording window w+d
	MaxOffset int            // the offsets tried: -MaxOffset .. MaxOffset
	Windows   []PredictedWindow
	Total     PredictedWindow // sums; Window is the number of windows
}

// ComparePredicted is [Compare] with, beside it, the simulator's prediction
// with setting s on the recording rec (the trace of an earlier run, read
// from the file named recording), and the decomposition of the recording's
// prediction minus the measurement.
func ComparePredicted(dir, recording string, rec *trace.Trace, s policy.Setting) (*Predicted, error) {
	cmp, err := Compare(dir, s)
	if err != nil {
		return nil, err
	}
	return predicted(cmp, recording, rec, sim.Run(rec, s))
}

// ComparePredictedControlled is [ComparePredicted] for a run decided by a
// controller: both predictions are sim.RunControlled of c.
func ComparePredictedControlled(dir, recording string, rec *trace.Trace, c policy.Controller) (*Predicted, error) {
	cmp, err := CompareControlled(dir, c)
	if err != nil {
		return nil, err
	}
	run, err := sim.RunControlled(context.Background(), rec, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", recording, err)
	}
	return predicted(cmp, recording, rec, run.Result)
}

// maxAlignOffset bounds the alignment offsets tried: a third of the
// shorter trace's windows, at most 10.
func maxAlignOffset(w, wr int) int {
	return min(min(w, wr)/3, 10)
}

func predicted(cmp *Comparison, recording string, rec *trace.Trace, recRes *result.Result) (*Predicted, error) {
	obs := cmp.trace
	if rec.Header.Window != obs.Header.Window {
		return nil, fmt.Errorf("%s: windows of %v, the run's are %v: record with the run's --window", recording, rec.Header.Window, obs.Header.Window)
	}
	if rec.Header.PageSize != obs.Header.PageSize {
		return nil, fmt.Errorf("%s: pages of %d bytes, the run's are %d", recording, rec.Header.PageSize, obs.Header.PageSize)
	}
	if rec.Header.Sample != obs.Header.Sample {
		return nil, fmt.Errorf("%s: sampled differently from the run (--sample): the counts are not comparable", recording)
	}
	W, WR := len(obs.Windows), len(rec.Windows)
	j := newJaccard(rec, obs)
	p := &Predicted{Cmp: cmp, Recording: recording, Recorded: recRes, MaxOffset: maxAlignOffset(W, WR)}
	p.Offset = j.bestOffset(p.MaxOffset)
	recAt := func(k int) Pair {
		if k < 0 || k >= WR {
			return Pair{}
		}
		return Pair{recRes.Promotions[k], recRes.SavedPerWindow[k]}
	}
	var in0, un0, inD, unD int64
	for w := range W {
		d := cmp.Windows[w]
		pw := PredictedWindow{
			Window: w, Accessed: d.Accessed,
			Recorded: recAt(w), Aligned: recAt(w + p.Offset),
			Counterfactual: Pair{d.PredPromotions, d.PredSaved},
			Measured:       Pair{d.Promotions, d.Saved},
			Refused:        Pair{d.RefusedPromotions, d.RefusedSaved},
			Limits:         Pair{d.SkippedPromotions, d.SkippedSaved},
			Back:           Pair{d.BackPromotions, d.BackSaved},
			Slack:          Pair{d.ResidualPromotions, d.ResidualSaved}.neg(),
		}
		if w < WR {
			pw.RecAccessed = recRes.Accessed[w]
		}
		pw.Shift = pw.Recorded.sub(pw.Aligned)
		pw.Workload = pw.Aligned.sub(pw.Counterfactual)
		i, u := j.window(w, w)
		in0, un0 = in0+i, un0+u
		pw.Jaccard = ratio(i, u)
		i, u = j.window(w+p.Offset, w)
		inD, unD = inD+i, unD+u
		pw.JaccardAligned = ratio(i, u)
		p.Windows = append(p.Windows, pw)

		t := &p.Total
		t.Window++
		t.RecAccessed += pw.RecAccessed
		t.Accessed += pw.Accessed
		for _, f := range [][2]*Pair{
			{&t.Recorded, &pw.Recorded}, {&t.Aligned, &pw.Aligned}, {&t.Counterfactual, &pw.Counterfactual},
			{&t.Measured, &pw.Measured}, {&t.Shift, &pw.Shift}, {&t.Workload, &pw.Workload},
			{&t.Refused, &pw.Refused}, {&t.Limits, &pw.Limits}, {&t.Back, &pw.Back}, {&t.Slack, &pw.Slack},
		} {
			*f[0] = f[0].add(*f[1])
		}
	}
	p.Total.Jaccard, p.Total.JaccardAligned = ratio(in0, un0), ratio(inD, unD)
	return p, nil
}

// ratio is i/u, 1 when u is 0 (two empty sets are the same set).
func ratio(i, u int64) float64 {
	if u == 0 {
		return 1
	}
	return float64(i) / float64(u)
}

// jaccard compares the accessed sets of two traces' windows, a page of
// one being the page of the other with the same space and page number.
type jaccard struct {
	rec, obs *trace.Trace
	recToObs []int32 // recording's dense ID -> observed dense ID, -1 if none
	stamp    []int32 // observed ID -> last run window w+1 marked
}

func newJaccard(rec, obs *trace.Trace) *jaccard {
	ids := make(map[trace.Page]int32, len(obs.Pages))
	for i, pg := range obs.Pages {
		ids[pg] = int32(i)
	}
	j := &jaccard{rec: rec, obs: obs, recToObs: make([]int32, len(rec.Pages)), stamp: make([]int32, len(obs.Pages))}
	for i, pg := range rec.Pages {
		if id, ok := ids[pg]; ok {
			j.recToObs[i] = id
		} else {
			j.recToObs[i] = -1
		}
	}
	return j
}

// window returns the intersection and union sizes of the accessed sets of
// recording window k and run window w (an absent window is empty).
func (j *jaccard) window(k, w int) (inter, union int64) {
	var a []uint32
	if k >= 0 && k < len(j.rec.Windows) {
		a = j.rec.Windows[k].Accessed
	}
	b := j.obs.Windows[w].Accessed
	for _, id := range b {
		j.stamp[id] = int32(w + 1)
	}
	for _, id := range a {
		if o := j.recToObs[id]; o >= 0 && j.stamp[o] == int32(w+1) {
			inter++
		}
	}
	for _, id := range b { // unmark, so that the next call with w starts clean
		j.stamp[id] = 0
	}
	return inter, int64(len(a)+len(b)) - inter
}

// bestOffset returns the offset d in -max..max that maximises the pooled
// Jaccard of recording window w+d against run window w over the run's
// windows whose w+d is in the recording (sum of intersections over sum of
// unions; 0 when every union is empty). Ties go to the smaller |d|, then
// to the negative d.
func (j *jaccard) bestOffset(max int) int {
	best, bestScore := 0, -1.0
	for _, d := range offsets(max) {
		var in, un int64
		for w := range j.obs.Windows {
			if k := w + d; k >= 0 && k < len(j.rec.Windows) {
				i, u := j.window(k, w)
				in, un = in+i, un+u
			}
		}
		s := 0.0
		if un > 0 {
			s = float64(in) / float64(un)
		}
		if s > bestScore {
			best, bestScore = d, s
		}
	}
	return best
}

// offsets is 0, -1, 1, -2, 2, ... -max, max: the order of the tie rule.
func offsets(max int) []int {
	out := []int{0}
	for d := 1; d <= max; d++ {
		out = append(out, -d, d)
	}
	return out
}

// withinRel reports whether a is within tol of b, relative to b: |a-b| <=
// tol*b; when b is 0, only a = 0 is within.
func withinRel(a, b, tol float64) bool {
	if b == 0 {
		return a == 0
	}
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= tol*b
}

// pr is promotions/accessed, 0 for no access.
func pr(prom, accessed int64) float64 {
	if accessed == 0 {
		return 0
	}
	return float64(prom) / float64(accessed)
}

// Goals are the accuracy goals, measured (docs/agent.md): the
// windows whose measured promotion rate is within 10% (relative) of the
// counterfactual's and within 25% of the recording's prediction, and the
// savings of the three, in points.
type Goals struct {
	Windows         int     `json:"windows"`
	WithinCf10      int     `json:"within_counterfactual_10pct"`
	WithinRec25     int     `json:"within_recorded_25pct"`
	SavingsRec      float64 `json:"savings_recorded"`
	SavingsCf       float64 `json:"savings_counterfactual"`
	SavingsMeasured float64 `json:"savings_measured"`
}

// Goals returns the run's goals. The recording's promotion rate in window
// w is rec(w)'s promotions over the recording's accessed pages in window w.
func (p *Predicted) Goals() Goals {
	g := Goals{Windows: len(p.Windows), SavingsRec: p.Recorded.Savings(),
		SavingsCf: p.Cmp.Predicted.Savings(), SavingsMeasured: p.Cmp.Measured.Savings()}
	for _, w := range p.Windows {
		m := pr(w.Measured.Promotions, w.Accessed)
		if withinRel(m, pr(w.Counterfactual.Promotions, w.Accessed), 0.10) {
			g.WithinCf10++
		}
		if withinRel(m, pr(w.Recorded.Promotions, w.RecAccessed), 0.25) {
			g.WithinRec25++
		}
	}
	return g
}

// Explain says in sentences how the recording's prediction became the
// measurement.
func (p *Predicted) Explain() []string {
	t := p.Total
	g := p.Goals()
	var out []string
	out = append(out, fmt.Sprintf("alignment: best offset %d windows (tried -%d..%d); accessed sets' Jaccard %.4f unaligned, %.4f aligned",
		p.Offset, p.MaxOffset, p.MaxOffset, t.Jaccard, t.JaccardAligned))
	for _, k := range []struct {
		name string
		get  func(Pair) int64
	}{{"promotions", func(x Pair) int64 { return x.Promotions }}, {"saved page-windows", func(x Pair) int64 { return x.Saved }}} {
		out = append(out, fmt.Sprintf("%s: recorded - measured = %d = %d (time shift) + %d (workload) + %d (refused) + %d (safety limits) + %d (swapped back in) + %d (tracker slack)",
			k.name, k.get(t.Recorded)-k.get(t.Measured), k.get(t.Shift), k.get(t.Workload), k.get(t.Refused), k.get(t.Limits), k.get(t.Back), k.get(t.Slack)))
	}
	out = append(out, fmt.Sprintf("goals: measured PR within 10%% of the counterfactual in %d of %d windows, within 25%% of the recording's prediction in %d of %d; savings %.4f%% recorded, %.4f%% counterfactual, %.4f%% measured",
		g.WithinCf10, g.Windows, g.WithinRec25, g.Windows, 100*g.SavingsRec, 100*g.SavingsCf, 100*g.SavingsMeasured))
	return out
}

// WriteText writes the three-way side-by-side: per window the accessed
// pages of both traces and their Jaccard, promotions and saved
// page-windows recorded/counterfactual/measured, the causes; the totals
// with the PR statistics of the three; and the explanation.
func (p *Predicted) WriteText(w io.Writer) error {
	c := p.Cmp
	fmt.Fprintf(w, "setting %s, %d windows of %s (%s tracker, kernel %s), predicted from %s (%d windows)\n",
		c.Info.Setting, len(p.Windows), c.Info.Window, c.Info.Tracker, c.Info.Kernel, p.Recording, len(p.Recorded.Accessed))
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window\taccessed\tjaccard\tpromotions\tsaved\tshift\tworkload\trefused\tlimits\tback\tslack\t")
	fmt.Fprintln(tw, "\trec/run\t0/aligned\trec/cf/meas\trec/cf/meas\tprom/saved\tprom/saved\tprom/saved\tprom/saved\tprom/saved\tprom/saved\t")
	i := strconv.FormatInt
	ps := func(x Pair) string { return i(x.Promotions, 10) + "/" + i(x.Saved, 10) }
	row := func(name string, d PredictedWindow) {
		fmt.Fprintf(tw, "%s\t%d/%d\t%.2f/%.2f\t%d/%d/%d\t%d/%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, d.RecAccessed, d.Accessed,
			d.Jaccard, d.JaccardAligned,
			d.Recorded.Promotions, d.Counterfactual.Promotions, d.Measured.Promotions,
			d.Recorded.Saved, d.Counterfactual.Saved, d.Measured.Saved,
			ps(d.Shift), ps(d.Workload), ps(d.Refused), ps(d.Limits), ps(d.Back), ps(d.Slack))
	}
	for _, d := range p.Windows {
		row(strconv.Itoa(d.Window), d)
	}
	row("total", p.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	r, cf, m := p.Recorded, c.Predicted, c.Measured
	fmt.Fprintf(w, "\n%-16s %12s %14s %12s\n", "", "recorded", "counterfactual", "measured")
	count := func(n int64) string { return i(n, 10) }
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 4, 64) + "%" }
	for _, s := range [][4]string{
		{"promotions", count(r.TotalPromotions()), count(cf.TotalPromotions()), count(m.TotalPromotions())},
		{"saved", count(r.Saved), count(cf.Saved), count(m.Saved)},
		{"max_pr", pct(r.MaxPR()), pct(cf.MaxPR()), pct(m.MaxPR())},
		{"p99_pr", pct(r.Percentile(99)), pct(cf.Percentile(99)), pct(m.Percentile(99))},
		{"mean_pr", pct(r.MeanPR()), pct(cf.MeanPR()), pct(m.MeanPR())},
		{"savings", pct(r.Savings()), pct(cf.Savings()), pct(m.Savings())},
	} {
		fmt.Fprintf(w, "%-16s %12s %14s %12s\n", s[0], s[1], s[2], s[3])
	}
	fmt.Fprintf(w, "(recorded: the recording's statistics over all its %d windows; the table's rows are the run's windows)\n\n", len(r.Accessed))
	if err := c.Memory.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, line := range p.Explain() {
		fmt.Fprint(w, wrap(line, textWidth))
	}
	return nil
}

// predictedColumns are the CSV's columns.
var predictedColumns = []string{"window", "rec_accessed", "accessed", "jaccard", "jaccard_aligned",
	"rec_promotions", "aligned_promotions", "cf_promotions", "promotions",
	"rec_saved", "aligned_saved", "cf_saved", "saved",
	"shift_promotions", "workload_promotions", "refused_promotions", "limits_promotions", "back_promotions", "slack_promotions",
	"shift_saved", "workload_saved", "refused_saved", "limits_saved", "back_saved", "slack_saved"}

// WriteCSV writes the per-window three-way side-by-side as CSV.
func (p *Predicted) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(append(slices.Clone(predictedColumns), memoryColumns...))
	for i, d := range p.Windows {
		rec := []string{strconv.Itoa(d.Window), strconv.FormatInt(d.RecAccessed, 10), strconv.FormatInt(d.Accessed, 10),
			strconv.FormatFloat(d.Jaccard, 'g', -1, 64), strconv.FormatFloat(d.JaccardAligned, 'g', -1, 64)}
		for _, v := range []int64{d.Recorded.Promotions, d.Aligned.Promotions, d.Counterfactual.Promotions, d.Measured.Promotions,
			d.Recorded.Saved, d.Aligned.Saved, d.Counterfactual.Saved, d.Measured.Saved,
			d.Shift.Promotions, d.Workload.Promotions, d.Refused.Promotions, d.Limits.Promotions, d.Back.Promotions, d.Slack.Promotions,
			d.Shift.Saved, d.Workload.Saved, d.Refused.Saved, d.Limits.Saved, d.Back.Saved, d.Slack.Saved} {
			rec = append(rec, strconv.FormatInt(v, 10))
		}
		cw.Write(append(rec, p.Cmp.Memory.csv(i)...))
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the three-way side-by-side as one JSON object
// ([Predicted.JSON]).
func (p *Predicted) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p.JSON())
}

// PredictedJSON is the object mdk agent compare --predicted-from --format
// json prints, and mdk report --predicted-from embeds.
type PredictedJSON struct {
	Setting        string             `json:"setting"`
	Window         string             `json:"window"`
	Tracker        string             `json:"tracker"`
	Recording      string             `json:"recording"`
	Offset         int                `json:"offset"`
	MaxOffset      int                `json:"max_offset"`
	Recorded       map[string]float64 `json:"recorded"`
	Counterfactual map[string]float64 `json:"counterfactual"`
	Measured       map[string]float64 `json:"measured"`
	Goals          Goals              `json:"goals"`
	Total          PredictedWindow    `json:"total"`
	Memory         Memory             `json:"memory"`
	Explain        []string           `json:"explain"`
	Windows        []PredictedWindow  `json:"windows"`
}

// JSON returns the side-by-side as its JSON object.
func (p *Predicted) JSON() PredictedJSON {
	stats := resultStats
	c := p.Cmp
	return PredictedJSON{c.Info.Setting, c.Info.Window, c.Info.Tracker, p.Recording, p.Offset, p.MaxOffset,
		stats(p.Recorded), stats(c.Predicted), stats(c.Measured), p.Goals(), p.Total, c.Memory, p.Explain(), p.Windows}
}
