package report

import (
	"encoding/json"
	"html/template"
	"strconv"
	"strings"

	"mdk/agent"
	"mdk/result"
)

// PredictedRun is an mdk agent run set beside the prediction of an earlier
// recording (agent.ComparePredicted, the computation of mdk agent compare
// --predicted-from), for the report's "Predicted from a recording" section;
// the report draws it and computes nothing of it.
type PredictedRun struct {
	Dir string           // the run directory as given
	P   *agent.Predicted // the three-way side-by-side and its decomposition
	// RecCurves are the curves of the recording (mpc on it, the report's
	// policies), drawn beside Data.Results, the curves of the trace the
	// run observed.
	RecCurves []*result.Result
}

// predictedView is the section's tables, formatted.
type predictedView struct {
	Dir, Setting, Tracker, Kernel, Recording string
	Windows, RecWindows                      int
	Offset, MaxOffset                        int
	Jaccard, JaccardAligned                  float64
	Totals                                   [][4]string // name, recorded, counterfactual, measured
	Causes                                   []causeRow  // promotions and saved: recorded - measured and its causes
	Goals                                    agent.Goals
	Explain                                  []string
	Rows                                     []predRow // the windows, then the total
	Memory                                   agent.Memory
	MemRows                                  [][]string // window (or "mean"), then memCols
	// JSON is the object mdk agent compare --predicted-from --format json
	// prints, embedded in the page.
	JSON template.JS
}

// predRow is a window (or the total) of the per-window table: a line of
// promotions and one of saved page-windows.
type predRow struct {
	Label                   string
	RecAccessed, Accessed   int64
	Jaccard, JaccardAligned float64
	Prom, Saved             []predCell
}

// predCell is a cell of a predRow, named by its column.
type predCell struct {
	Col string
	V   int64
}

// predCols are the per-window table's count columns, in order.
var predCols = []string{"recorded", "aligned", "counterfactual", "measured", "diff", "shift", "workload", "refused", "limits", "back", "slack"}

func newPredRow(label string, d agent.PredictedWindow) predRow {
	r := predRow{Label: label, RecAccessed: d.RecAccessed, Accessed: d.Accessed, Jaccard: d.Jaccard, JaccardAligned: d.JaccardAligned}
	vals := append([]agent.Pair{d.Recorded, d.Aligned, d.Counterfactual, d.Measured, recMinusMeas(d)}, causesOf(d)...)
	for i, v := range vals {
		r.Prom = append(r.Prom, predCell{predCols[i], v.Promotions})
		r.Saved = append(r.Saved, predCell{predCols[i], v.Saved})
	}
	return r
}

// causeRow is one line of the decomposition table.
type causeRow struct {
	What                                                string
	Diff, Shift, Workload, Refused, Limits, Back, Slack int64
}

// memCols are the memory table's cells of a row, in MiB.
func memCols(m agent.MemoryWindow) []string {
	return []string{agent.MiB(m.Alive), agent.MiB(m.RSS), agent.MiB(m.Swap), agent.MiB(m.Zram), agent.MiB(m.Net), agent.MiB(m.Saved), agent.MiB(m.NetSaved)}
}

// memRows is the memory table's rows: the windows, then the mean.
func memRows(m agent.Memory) [][]string {
	var out [][]string
	for _, d := range m.Windows {
		out = append(out, append([]string{strconv.Itoa(d.Window)}, memCols(d)...))
	}
	return append(out, append([]string{"mean"}, memCols(m.Mean)...))
}

func newPredictedView(r *PredictedRun) (*predictedView, error) {
	p := r.P
	c := p.Cmp
	js, err := json.Marshal(p.JSON())
	if err != nil {
		return nil, err
	}
	v := &predictedView{
		Dir: r.Dir, Setting: c.Info.Setting, Tracker: c.Info.Tracker, Kernel: c.Info.Kernel, Recording: p.Recording,
		Windows: len(p.Windows), RecWindows: len(p.Recorded.Accessed), Offset: p.Offset, MaxOffset: p.MaxOffset,
		Jaccard: p.Total.Jaccard, JaccardAligned: p.Total.JaccardAligned,
		Goals: p.Goals(), Explain: p.Explain(), Memory: c.Memory, JSON: template.JS(js),
	}
	for _, d := range p.Windows {
		v.Rows = append(v.Rows, newPredRow(strconv.Itoa(d.Window), d))
	}
	v.Rows = append(v.Rows, newPredRow("total", p.Total))
	v.MemRows = memRows(c.Memory)
	rec, cf, m := p.Recorded, c.Predicted, c.Measured
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	f := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 4, 64) + "%" }
	v.Totals = [][4]string{
		{"promotions", i(rec.TotalPromotions()), i(cf.TotalPromotions()), i(m.TotalPromotions())},
		{"saved page-windows", i(rec.Saved), i(cf.Saved), i(m.Saved)},
		{"max_pr", f(rec.MaxPR()), f(cf.MaxPR()), f(m.MaxPR())},
		{"p99_pr", f(rec.Percentile(99)), f(cf.Percentile(99)), f(m.Percentile(99))},
		{"mean_pr", f(rec.MeanPR()), f(cf.MeanPR()), f(m.MeanPR())},
		{"savings", f(rec.Savings()), f(cf.Savings()), f(m.Savings())},
	}
	t := p.Total
	for _, k := range []struct {
		what string
		get  func(agent.Pair) int64
	}{{"promotions", func(x agent.Pair) int64 { return x.Promotions }}, {"saved page-windows", func(x agent.Pair) int64 { return x.Saved }}} {
		v.Causes = append(v.Causes, causeRow{What: k.what, Diff: k.get(t.Recorded) - k.get(t.Measured), Shift: k.get(t.Shift),
			Workload: k.get(t.Workload), Refused: k.get(t.Refused), Limits: k.get(t.Limits), Back: k.get(t.Back), Slack: k.get(t.Slack)})
	}
	return v, nil
}

// jsPredicted is the payload of the section's charts.
type jsPredicted struct {
	Setting string `json:"setting"`
	// Per window: promotions and saved page-windows, recorded (rec),
	// aligned, counterfactual (cf) and measured (meas).
	RecPromotions  [][2]any `json:"recPromotions"`
	AlignedProm    [][2]any `json:"alignedPromotions"`
	CfPromotions   [][2]any `json:"cfPromotions"`
	MeasPromotions [][2]any `json:"measPromotions"`
	RecSaved       [][2]any `json:"recSaved"`
	AlignedSaved   [][2]any `json:"alignedSaved"`
	CfSaved        [][2]any `json:"cfSaved"`
	MeasSaved      [][2]any `json:"measSaved"`
	// The causes of recorded - measured per window, in agent.Causes's
	// order, for promotions and saved.
	CauseNames []string     `json:"causeNames"`
	CauseProm  [][][2]any   `json:"causePromotions"`
	CauseSaved [][][2]any   `json:"causeSaved"`
	DiffProm   [][2]any     `json:"diffPromotions"` // recorded - measured
	DiffSaved  [][2]any     `json:"diffSaved"`
	Jaccard    [][2]any     `json:"jaccard"`
	JaccardAl  [][2]any     `json:"jaccardAligned"`
	Memory     []jsMemLine  `json:"memory"` // MiB
	RecCurves  []jsCurve    `json:"recCurves"`
	Points     []jsRealised `json:"points"` // recorded, counterfactual, measured
}

type jsMemLine struct {
	Name string   `json:"name"`
	Data [][2]any `json:"data"`
}

// jsRealised is one of the three points on the curves chart.
type jsRealised struct {
	Name string  `json:"name"`
	X    float64 `json:"x"` // the report's statistic, percent
	Y    float64 `json:"y"` // savings, percent
}

// causeNames are the causes, in the order of agent.PredictedWindow.Causes.
var causeNames = []string{"time shift", "workload", "refused", "safety limits", "swapped back in", "tracker slack"}

// recMinusMeas is recorded - measured, which the causes add up to.
func recMinusMeas(d agent.PredictedWindow) agent.Pair {
	return agent.Pair{Promotions: d.Recorded.Promotions - d.Measured.Promotions, Saved: d.Recorded.Saved - d.Measured.Saved}
}

func causesOf(d agent.PredictedWindow) []agent.Pair {
	return []agent.Pair{d.Shift, d.Workload, d.Refused, d.Limits, d.Back, d.Slack}
}

func predictedPayload(r *PredictedRun, o Options) *jsPredicted {
	if r == nil {
		return nil
	}
	p := r.P
	W := len(p.Windows)
	col := func(get func(agent.PredictedWindow) float64) [][2]any {
		v := make([]float64, W)
		for w, d := range p.Windows {
			v[w] = get(d)
		}
		return pairs(v, o.MaxPoints, false)
	}
	prom := func(get func(agent.PredictedWindow) agent.Pair) [][2]any {
		return col(func(d agent.PredictedWindow) float64 { return float64(get(d).Promotions) })
	}
	saved := func(get func(agent.PredictedWindow) agent.Pair) [][2]any {
		return col(func(d agent.PredictedWindow) float64 { return float64(get(d).Saved) })
	}
	j := &jsPredicted{
		Setting:        p.Cmp.Info.Setting,
		RecPromotions:  prom(func(d agent.PredictedWindow) agent.Pair { return d.Recorded }),
		AlignedProm:    prom(func(d agent.PredictedWindow) agent.Pair { return d.Aligned }),
		CfPromotions:   prom(func(d agent.PredictedWindow) agent.Pair { return d.Counterfactual }),
		MeasPromotions: prom(func(d agent.PredictedWindow) agent.Pair { return d.Measured }),
		RecSaved:       saved(func(d agent.PredictedWindow) agent.Pair { return d.Recorded }),
		AlignedSaved:   saved(func(d agent.PredictedWindow) agent.Pair { return d.Aligned }),
		CfSaved:        saved(func(d agent.PredictedWindow) agent.Pair { return d.Counterfactual }),
		MeasSaved:      saved(func(d agent.PredictedWindow) agent.Pair { return d.Measured }),
		CauseNames:     causeNames,
		Jaccard:        col(func(d agent.PredictedWindow) float64 { return d.Jaccard }),
		JaccardAl:      col(func(d agent.PredictedWindow) float64 { return d.JaccardAligned }),
	}
	j.DiffProm, j.DiffSaved = prom(recMinusMeas), saved(recMinusMeas)
	for k := range causeNames {
		j.CauseProm = append(j.CauseProm, prom(func(d agent.PredictedWindow) agent.Pair { return causesOf(d)[k] }))
		j.CauseSaved = append(j.CauseSaved, saved(func(d agent.PredictedWindow) agent.Pair { return causesOf(d)[k] }))
	}
	mem := p.Cmp.Memory
	for _, m := range []struct {
		name string
		get  func(agent.MemoryWindow) int64
	}{
		{"alive (no reclaim)", func(m agent.MemoryWindow) int64 { return m.Alive }},
		{"rss", func(m agent.MemoryWindow) int64 { return m.RSS }},
		{"swap", func(m agent.MemoryWindow) int64 { return m.Swap }},
		{"zram", func(m agent.MemoryWindow) int64 { return m.Zram }},
		{"net (rss + zram)", func(m agent.MemoryWindow) int64 { return m.Net }},
	} {
		if !mem.Known && (m.name == "rss" || m.name == "swap" || strings.HasPrefix(m.name, "net")) {
			continue
		}
		v := make([]float64, len(mem.Windows))
		for w, d := range mem.Windows {
			v[w] = float64(m.get(d)) / (1 << 20)
		}
		j.Memory = append(j.Memory, jsMemLine{Name: m.name, Data: pairs(v, o.MaxPoints, false)})
	}
	j.RecCurves = curvesPayload(r.RecCurves, o, nil)
	for _, pt := range []struct {
		name string
		r    *result.Result
	}{{"recorded", p.Recorded}, {"counterfactual", p.Cmp.Predicted}, {"measured", p.Cmp.Measured}} {
		j.Points = append(j.Points, jsRealised{Name: pt.name, X: round(100 * pt.r.Stat(o.X)), Y: round(100 * pt.r.Savings())})
	}
	return j
}
