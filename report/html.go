package report

import (
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"mdk/policy"
	"mdk/result"
	"mdk/stats"
	"mdk/tier"
	"mdk/tune"
)

//go:embed assets/report.html assets/report.css assets/report.js assets/echarts.common.min.js
var assets embed.FS

// Data is everything a report shows about one trace.
type Data struct {
	Trace   string       // the trace's path as given
	SHA256  string       // hex SHA-256 of the trace file ("" if unknown, e.g. stdin)
	Command string       // the command line that made the report
	Version string       // mdk's version
	Date    time.Time    // when the report was made
	Stats   *stats.Stats // the trace's summary (stats.Compute)
	// Results are every setting's results on the trace (mpc.Generate), all
	// with the same per-window arrays' length.
	Results []*result.Result
	// Tune, if set, is the outcome of tune.Run on the trace: the report
	// then has a Tuning section (the SLO, the train and eval parts, each
	// policy's chosen setting on both, the OPP yardstick and warnings).
	Tune *tune.Report
	// Tier, if set, is a far tier (docs/tiers.md): the report then draws
	// net savings against the slowdown on it, and its tables add the
	// tier's columns. Window is the trace's window length, which the
	// slowdown needs.
	Tier   *tier.Tier
	Window time.Duration
	// Agent, if set, is an mdk agent run on the trace (the trace it
	// observed): the report then has an "Agent run" section with predicted
	// and measured promotions and saved pages per window, as a chart.
	Agent *AgentRun
	// Predicted, if set, is the run set beside an earlier recording's
	// prediction (mdk report RUN --predicted-from RECORDING): the report
	// then has a "Predicted from a recording" section.
	Predicted *PredictedRun
	// Design, if set, adds the design section (mdk report --design): the
	// headroom against OPP by cause and by region, and what-if curves.
	Design *Design
	// Controllers are runs of controllers on the trace (any
	// policy.Controller, as sim.RunControlled runs it), each also among
	// Results: the report then has a Controllers section placing each one's
	// realised point beside the fixed policies and OPP at the statistic it
	// realised (result.AtRealised).
	Controllers []Controller
}

// Controller is one controller's run on the trace.
type Controller struct {
	Result   *result.Result // the run; its Policy and Params name the controller
	Switches int            // how many times its setting changed
}

// Options choose what a report shows.
type Options struct {
	X       result.Stat // x statistic of the curves and the table; "" means max_pr
	LogX    bool        // logarithmic x axis for the curves
	Targets []float64   // promotion-rate targets (fractions); nil means result.DefaultTargets
	// Settings are the settings whose per-window timelines are shown, as
	// "policy:params" (e.g. "age:A=20"); nil means each policy's best at the
	// first target (or, if none meets it, its setting with the lowest
	// statistic).
	Settings []string
	// MaxPoints caps the points of each per-window series drawn (0 means
	// DefaultMaxPoints). Tables always use the full results.
	MaxPoints int
	// TierX and TierTargets, with Data.Tier, add rows to the best-setting
	// table: each policy's best setting whose tier metric TierX (slowdown
	// or max_slowdown) is at most each of TierTargets (fractions: 0.01 is
	// "at most 1% slowdown"), after the rows of Targets. "" adds none.
	TierX       tier.Metric
	TierTargets []float64
}

// DefaultMaxPoints is the default cap on displayed points per series.
const DefaultMaxPoints = 2000

func (o Options) withDefaults() Options {
	if o.X == "" {
		o.X = result.MaxPR
	}
	if o.Targets == nil {
		o.Targets = result.DefaultTargets
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = DefaultMaxPoints
	}
	return o
}

var (
	tmplOnce sync.Once
	tmpl     *template.Template
	tmplErr  error
)

func parseTemplate() (*template.Template, error) {
	tmplOnce.Do(func() {
		tmpl, tmplErr = template.New("report.html").Funcs(template.FuncMap{
			"pct":   func(f float64) string { return strconv.FormatFloat(100*f, 'f', 3, 64) },
			"raw":   result.FormatFloat,
			"ratep": formatPercent,
			"int":   intString,
			"bytes": formatBytes,
			// pct2 and pts print as mdk tune's terminal table does.
			"pct2": func(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) },
			"pts":  func(f float64) string { return fmt.Sprintf("%+.2f pts", 100*f) },
		}).ParseFS(assets, "assets/report.html")
	})
	return tmpl, tmplErr
}

// page is the template's data.
type page struct {
	D        *Data
	O        Options
	Date     string
	XLabel   string
	Best     []bestRow
	All      [][]string
	Header   []string
	CSS      template.CSS
	ECharts  template.JS
	Script   template.JS
	Payload  template.JS
	Chosen   []string
	Warnings []string
	Tune     *tuneView
	Sample   string // on a sample: how its numbers are estimated
	// Controllers is the Controllers section (Data.Controllers).
	Controllers []controllerView
	// Predicted is the section of Data.Predicted.
	Predicted *predictedView
	// AgentMemory is the memory table of Data.Agent (memRows).
	AgentMemory [][]string
}

// controllerView is one controller in the Controllers section: its realised
// point, OPP's and each fixed policy's best setting at its statistic, in
// rows, with the sentence and mdk mpc's line.
type controllerView struct {
	Name, Sentence, Line string
	Switches             int
	Rows                 []realisedRow
}

// realisedRow is one row of a controller's table.
type realisedRow struct {
	What, Policy, Params string
	Found                bool
	Savings, Stat        float64
	Headroom             float64 // OPP's savings minus this row's
	HasHeadroom          bool
	Promotions           int64
}

// newControllerViews places each controller on the fixed settings' curves.
func newControllerViews(d *Data, st result.Stat) []controllerView {
	isCtl := map[*result.Result]bool{}
	for _, c := range d.Controllers {
		isCtl[c.Result] = true
	}
	var fixed []*result.Result
	for _, r := range d.Results {
		if !isCtl[r] {
			fixed = append(fixed, r)
		}
	}
	var out []controllerView
	for _, c := range d.Controllers {
		re := result.AtRealised(c.Result, fixed, st)
		v := controllerView{Name: re.Name(), Sentence: re.Sentence(), Line: re.Line(), Switches: c.Switches}
		row := func(what string, r *result.Result, policy string) realisedRow {
			w := realisedRow{What: what, Policy: policy}
			if r == nil {
				return w
			}
			w.Params, w.Found, w.Savings, w.Stat, w.Promotions = r.Params, true, r.Savings(), r.Stat(st), r.TotalPromotions()
			if re.OPP != nil {
				w.Headroom, w.HasHeadroom = re.OPP.Savings()-r.Savings(), true
			}
			return w
		}
		v.Rows = append(v.Rows, row("controller", c.Result, c.Result.Policy))
		v.Rows = append(v.Rows, row("OPP, the same budget", re.OPP, "opp"))
		for _, p := range re.Policies {
			v.Rows = append(v.Rows, row("best fixed setting", p.Best, p.Policy))
		}
		out = append(out, v)
	}
	return out
}

// tuneView is the Tuning section: a tune.Report in the words of mdk tune's
// terminal table (tune.WriteText).
type tuneView struct {
	SLO, Stat, Bound   string
	Claim              template.HTML // what the yardstick is (tune.SLO.YardstickClaim: a constant text)
	Train, Valid, Eval partView
	Rows               []tune.Choice
	OPP                *tune.Yardstick
	Warnings           []string
	// Controllers are the report's controllers' comparison rows
	// (tune.ControllerChoice.Rows), the controller's own setting column
	// its retunes, as mdk tune prints them.
	Controllers []tune.CompareRow
}

type partView struct {
	Windows  int
	Segments []string
}

func newTuneView(r *tune.Report) *tuneView {
	part := func(p tune.Part) partView {
		v := partView{Windows: p.Windows}
		for _, s := range p.Segments {
			v.Segments = append(v.Segments, s.String())
		}
		return v
	}
	v := &tuneView{
		SLO: r.SLO.String(), Stat: r.SLO.Stat.String(), Bound: policy.FormatRate(r.SLO.PPM), Claim: template.HTML(r.SLO.YardstickClaim()),
		Train: part(r.Train), Valid: part(r.Validation), Eval: part(r.Eval), Rows: r.Policies, OPP: r.OPP, Warnings: r.Warnings,
	}
	for i := range r.Controllers {
		for _, row := range r.Controllers[i].Rows(r.OPP) {
			if row.Kind == "controller" {
				row.Setting = fmt.Sprintf("(%d retunes)", r.Controllers[i].Retunes)
			}
			v.Controllers = append(v.Controllers, row)
		}
	}
	return v
}

type bestRow struct {
	// NetSavings and Slowdown are the setting's on Data.Tier (if any).
	NetSavings, Slowdown float64
	// TargetOn names the tier metric a row's target is on (Options.TierX);
	// "" for a target on Options.X.
	TargetOn       string
	Policy, Params string
	Target         float64
	Found          bool
	Savings, Stat  float64
	Headroom       float64
	HasHeadroom    bool
	Promotions     int64
	AvgSavedBytes  float64
	// Err, on a sample: the error bounds of the same metrics.
	Err *bestErr
}

// Each is the bound printed (result.Result.PrintedBound), or 0 where none
// is: the rule of docs/bench.md prints none for savings, the statistics and
// the headroom.
type bestErr struct {
	Savings, Stat float64
	Headroom      float64 // of OPP's headroom, when HasHeadroom
	Promotions    int64
	AvgSavedBytes float64
}

// printed is r's printed bound of m, or 0 where none is printed.
func printed(r *result.Result, m result.Metric) float64 {
	b, _ := r.PrintedBound(m)
	return b
}

// Generate writes the HTML report of data to w: one self-contained file
// (every script and style inline, no network access when opened).
func Generate(w io.Writer, data *Data, opts Options) error {
	if data == nil || data.Stats == nil {
		return errors.New("report: no trace statistics")
	}
	if len(data.Results) == 0 {
		return errors.New("report: no results")
	}
	opts = opts.withDefaults()
	if _, ok := result.ParseStat(string(opts.X)); !ok {
		return fmt.Errorf("report: unknown statistic %q", opts.X)
	}
	if opts.TierX != "" {
		if _, ok := tier.ParseMetric(string(opts.TierX)); !ok {
			return fmt.Errorf("report: unknown tier metric %q", opts.TierX)
		}
		if data.Tier == nil {
			return fmt.Errorf("report: targets on %s need a tier", opts.TierX)
		}
	}
	t, err := parseTemplate()
	if err != nil {
		return fmt.Errorf("report: template: %w", err)
	}
	chosen, warn, err := chooseTimelines(data.Results, opts)
	if err != nil {
		return err
	}
	recs := make(map[*result.Result]result.Record, len(data.Results))
	for _, r := range data.Results {
		recs[r] = r.Record(false)
	}
	pl, err := json.Marshal(buildPayload(data, opts, chosen, recs))
	if err != nil {
		return err
	}
	css, _ := assets.ReadFile("assets/report.css")
	js, _ := assets.ReadFile("assets/report.js")
	ech, _ := assets.ReadFile("assets/echarts.common.min.js")
	pg := page{
		D: data, O: opts,
		Date:     data.Date.UTC().Format(time.RFC3339),
		XLabel:   statLabel(opts.X),
		Header:   result.CSVHeader,
		CSS:      template.CSS(css),
		ECharts:  template.JS(ech),
		Script:   template.JS(js),
		Payload:  template.JS(pl),
		Warnings: warn,
	}
	if data.Tune != nil {
		pg.Tune = newTuneView(data.Tune)
	}
	pg.Controllers = newControllerViews(data, opts.X)
	if data.Agent != nil && data.Agent.Memory != nil {
		pg.AgentMemory = memRows(*data.Agent.Memory)
	}
	if data.Predicted != nil {
		if pg.Predicted, err = newPredictedView(data.Predicted); err != nil {
			return err
		}
	}
	if r := data.Results[0]; r.Sampled() {
		pg.Header = append(slices.Clone(pg.Header), result.SampleHeader()...)
		pg.Sample = fmt.Sprintf("Sampled: %s of the pages (a seeded hash of space and page). Counts (promotions, saved and alive page-windows, memory) are the sample's times %d; rates (promotion rates, savings) are the sample's own. ± is an approximate 95%% bound from %d disjoint random sub-samples, printed only where such bounds covered the exact values for 90%% of the settings (docs/bench.md, sampling): promotions (not OPP's) and saved bytes; savings, the promotion-rate statistics and the headroom against OPP have none, here, in the *_err columns below or on the curves.",
			policy.FormatRate(r.SamplePPM), 1_000_000/r.SamplePPM, len(r.Groups))
	}
	for _, c := range chosen {
		pg.Chosen = append(pg.Chosen, c.r.Policy+":"+c.r.Params)
	}
	choices := result.Choose(data.Results, opts.X, opts.Targets)
	tierRows := len(choices)
	if opts.TierX != "" {
		choices = append(choices, result.ChooseBy(data.Results, data.Tier.Func(opts.TierX, data.Window), opts.TierTargets)...)
	}
	for i, c := range choices {
		row := bestRow{Policy: c.Policy, Target: c.Target, Headroom: c.Headroom, HasHeadroom: c.HasHeadroom}
		if i >= tierRows {
			row.TargetOn = string(opts.TierX)
		}
		if c.Best != nil {
			row.Found = true
			row.Params = c.Best.Params
			row.Savings = c.Best.Savings()
			row.Stat = c.Best.Stat(opts.X)
			row.Promotions = c.Best.TotalPromotions()
			row.AvgSavedBytes = c.Best.AvgSavedBytes()
			if data.Tier != nil {
				k := data.Tier.Cost(c.Best, data.Window)
				row.NetSavings, row.Slowdown = k.NetSavings, k.Slowdown
			}
			if b := c.Best; b.Sampled() {
				stat, _ := result.MetricByName(string(opts.X))
				bound := func(name string) float64 { m, _ := result.MetricByName(name); return printed(b, m) }
				head, _ := c.PrintedHeadroomBound()
				row.Err = &bestErr{Savings: bound("savings"), Stat: printed(b, stat),
					Promotions: int64(math.Round(bound("promotions"))), AvgSavedBytes: bound("avg_saved_bytes"), Headroom: head}
			}
		}
		pg.Best = append(pg.Best, row)
	}
	for _, r := range data.Results {
		row := recs[r].CSVRow()
		if data.Tier != nil {
			row = append(row, data.Tier.Cost(r, data.Window).Row()...)
		}
		pg.All = append(pg.All, row)
	}
	if data.Tier != nil {
		pg.Header = append(slices.Clone(pg.Header), tier.Columns...) // after the sample's columns, as in the rows
	}
	return t.Execute(w, pg)
}

// timeline is a setting chosen for the per-window charts.
type timeline struct {
	r   *result.Result
	why string
}

func chooseTimelines(rs []*result.Result, o Options) ([]timeline, []string, error) {
	var out []timeline
	var warn []string
	if o.Settings != nil {
		for _, s := range o.Settings {
			i := slices.IndexFunc(rs, func(r *result.Result) bool { return r.Policy+":"+r.Params == s })
			if i < 0 {
				return nil, nil, fmt.Errorf("report: setting %q is not among the results", s)
			}
			out = append(out, timeline{rs[i], "chosen"})
		}
		return out, nil, nil
	}
	names, groups := result.Group(rs)
	t := o.Targets[0]
	for _, name := range names {
		if b := result.Best(groups[name], o.X, t); b != nil {
			out = append(out, timeline{b, "best at " + string(o.X) + " ≤ " + formatPercent(t)})
			continue
		}
		low := slices.MinFunc(groups[name], func(a, b *result.Result) int {
			return cmp.Or(cmp.Compare(a.Stat(o.X), b.Stat(o.X)), -cmp.Compare(a.Savings(), b.Savings()))
		})
		out = append(out, timeline{low, "lowest " + string(o.X) + "; none meets " + formatPercent(t)})
		warn = append(warn, fmt.Sprintf("no %s setting meets %s ≤ %s; its timeline shows the setting with the lowest %s", name, o.X, formatPercent(t), o.X))
	}
	return out, warn, nil
}

// payload is the JSON the page's script draws from. Percentages are
// rounded for display only.
type payload struct {
	X       string    `json:"x"`
	XLabel  string    `json:"xLabel"`
	LogX    bool      `json:"logX"`
	Targets []float64 `json:"targets"` // percent
	// XView is the curves chart's initial visible end of the x axis
	// (percent): twice the largest target, so that the targets are not
	// squeezed into the left edge; zooming out shows everything. 0: all.
	XView         float64   `json:"xView"`
	Window        string    `json:"window"`
	Windows       int       `json:"windows"`
	Downsampled   bool      `json:"downsampled"`
	Curves        []jsCurve `json:"curves"`
	Timelines     []jsTimes `json:"timelines"`
	Accessed      [][2]any  `json:"accessed"`
	Alive         [][2]any  `json:"alive"`
	GapLabels     []string  `json:"gapLabels"`
	ClosedGaps    []int64   `json:"closedGaps"`
	OpenGaps      []int64   `json:"openGaps"`
	PageSizeBytes int       `json:"pageSize"`
	// Tune is Data.Tune as mdk tune --json prints it (absent without it).
	Tune *tune.Report `json:"tune,omitempty"`
	// TierCurves are the curves on Data.Tier: x the slowdown, y the net
	// savings, both in percent (absent without a tier).
	TierCurves []jsCurve `json:"tierCurves,omitempty"`
	Tier       string    `json:"tier,omitempty"`
	// Agent is Data.Agent's chart (absent without it).
	Agent *jsAgent `json:"agent,omitempty"`
	// Predicted is Data.Predicted's charts (absent without it).
	Predicted *jsPredicted `json:"predicted,omitempty"`
	// Design is Data.Design's charts (absent without it).
	Design *jsDesign `json:"design,omitempty"`
}

type jsCurve struct {
	Policy string    `json:"policy"`
	Points []jsPoint `json:"points"`
}

type jsPoint struct {
	X          float64 `json:"x"` // statistic, percent
	Y          float64 `json:"y"` // savings, percent
	Params     string  `json:"params"`
	MaxPR      float64 `json:"max_pr"`
	P99PR      float64 `json:"p99_pr"`
	MeanPR     float64 `json:"mean_pr"`
	Promotions int64   `json:"promotions"`
	Saved      int64   `json:"saved"`
	Frontier   bool    `json:"f,omitempty"` // on the policy's Pareto frontier (see WritePlot)
	// On a sample: the error bounds of X and Y (result.Result.Bound),
	// percent, drawn as error bars.
	XErr float64 `json:"xe,omitempty"`
	YErr float64 `json:"ye,omitempty"`
	// On a tier's curve: net saved bytes and stall seconds per window.
	NetBytes float64 `json:"net_bytes,omitempty"`
	Stall    float64 `json:"stall,omitempty"`
}

type jsTimes struct {
	Label    string   `json:"label"`
	Why      string   `json:"why"`
	PR       [][2]any `json:"pr"` // percent
	Accessed [][2]any `json:"accessed"`
	Resident [][2]any `json:"resident"`
	Saved    [][2]any `json:"saved"`
}

// round keeps 4 significant digits: enough for a chart, much shorter JSON.
func round(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return v
}

func pairs(v []float64, maxPoints int, isInt bool) [][2]any {
	pts := downsample(v, maxPoints)
	out := make([][2]any, len(pts))
	for i, p := range pts {
		if isInt {
			out[i] = [2]any{p.W, int64(p.V)}
		} else {
			out[i] = [2]any{p.W, round(p.V)}
		}
	}
	return out
}

func ints(xs []int64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// buildPayload collects what the charts draw; recs, if not nil, holds the
// results' records (saving a sort per percentile).
func buildPayload(d *Data, o Options, chosen []timeline, recs map[*result.Result]result.Record) payload {
	p := payload{
		X:             string(o.X),
		XLabel:        statLabel(o.X),
		LogX:          o.LogX,
		Window:        d.Stats.Window,
		PageSizeBytes: d.Stats.PageSize,
		Tune:          d.Tune,
	}
	for _, t := range o.Targets {
		p.Targets = append(p.Targets, round(100*t))
		p.XView = max(p.XView, round(200*t))
	}
	p.Curves = curvesPayload(d.Results, o, recs)
	names, groups := result.Group(d.Results)
	if t := d.Tier; t != nil {
		p.Tier = t.Name
		for _, name := range names {
			c := jsCurve{Policy: name}
			for _, r := range groups[name] {
				k := t.Cost(r, d.Window)
				c.Points = append(c.Points, jsPoint{
					X: round(100 * k.Slowdown), Y: round(100 * k.NetSavings), Params: r.Params,
					MaxPR: r.MaxPR(), P99PR: r.Percentile(99), MeanPR: r.MeanPR(),
					Promotions: r.TotalPromotions(), Saved: r.Saved, NetBytes: round(k.NetAvgSavedBytes), Stall: k.StallSecondsPerWindow,
				})
			}
			slices.SortStableFunc(c.Points, func(a, b jsPoint) int { return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y)) })
			for _, i := range frontier(c.Points, func(p jsPoint) (float64, float64) { return p.X, p.Y }) {
				c.Points[i].Frontier = true
			}
			p.TierCurves = append(p.TierCurves, c)
		}
	}
	p.Agent = agentPayload(d.Agent, o.MaxPoints)
	p.Predicted = predictedPayload(d.Predicted, o)
	p.Design = designPayload(d.Design, o.X)
	r0 := d.Results[0]
	p.Windows = r0.Windows()
	p.Downsampled = p.Windows > o.MaxPoints
	p.Accessed = pairs(ints(r0.Accessed), o.MaxPoints, true)
	p.Alive = pairs(ints(r0.AlivePerWindow), o.MaxPoints, true)
	for _, t := range chosen {
		r := t.r
		n := r.Windows()
		pr := make([]float64, n)
		res := make([]float64, n)
		for w := range n {
			pr[w] = 100 * r.PR(w)
			res[w] = float64(r.AlivePerWindow[w] - r.SavedPerWindow[w])
		}
		p.Timelines = append(p.Timelines, jsTimes{
			Label:    r.Policy + ":" + r.Params,
			Why:      t.why,
			PR:       pairs(pr, o.MaxPoints, false),
			Accessed: pairs(ints(r.Accessed), o.MaxPoints, true),
			Resident: pairs(res, o.MaxPoints, true),
			Saved:    pairs(ints(r.SavedPerWindow), o.MaxPoints, true),
		})
	}
	for b := range d.Stats.ClosedGapHist {
		p.GapLabels = append(p.GapLabels, d.Stats.ClosedGapHist[b].Label())
		p.ClosedGaps = append(p.ClosedGaps, d.Stats.ClosedGapHist[b].Count)
		p.OpenGaps = append(p.OpenGaps, d.Stats.OpenGapHist[b].Count)
	}
	return p
}

// curvesPayload is the curves of results rs, a policy each, on the
// statistic o.X; recs, if not nil, holds the results' records.
func curvesPayload(rs []*result.Result, o Options, recs map[*result.Result]result.Record) []jsCurve {
	var out []jsCurve
	names, groups := result.Group(rs)
	for _, name := range names {
		c := jsCurve{Policy: name}
		for _, r := range groups[name] {
			rec, ok := recs[r]
			if !ok {
				rec = r.Record(false)
			}
			x := map[result.Stat]float64{result.MaxPR: float64(rec.MaxPR), result.P99PR: float64(rec.P99PR),
				result.P98PR: float64(rec.P98PR), result.MeanPR: float64(rec.MeanPR)}[o.X]
			pt := jsPoint{
				X: round(100 * x), Y: round(100 * float64(rec.Savings)), Params: r.Params,
				MaxPR: float64(rec.MaxPR), P99PR: float64(rec.P99PR), MeanPR: float64(rec.MeanPR),
				Promotions: rec.Promotions, Saved: rec.SavedPageWindows,
			}
			if r.Sampled() {
				stat, _ := result.MetricByName(string(o.X))
				sav, _ := result.MetricByName("savings")
				pt.XErr, pt.YErr = round(100*printed(r, stat)), round(100*printed(r, sav))
			}
			c.Points = append(c.Points, pt)
		}
		slices.SortStableFunc(c.Points, func(a, b jsPoint) int { return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y)) })
		for _, i := range frontier(c.Points, func(p jsPoint) (float64, float64) { return p.X, p.Y }) {
			c.Points[i].Frontier = true
		}
		out = append(out, c)
	}
	return out
}

// groupDigits prints n with thin spaces between groups of three digits.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u2009")
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// formatBytes prints a byte count with a binary unit (KiB, MiB, ...).
func formatBytes(x float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for math.Abs(x) >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(x, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + " " + units[i]
}

// intString prints an int or int64 with grouped digits.
func intString(n any) string {
	switch n := n.(type) {
	case int:
		return groupDigits(int64(n))
	case int64:
		return groupDigits(n)
	}
	return fmt.Sprint(n)
}
