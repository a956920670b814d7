package result

import (
	"fmt"
	"math"
	"strconv"
)

// Sampled runs. A run on a spatial sample of a trace's pages (mpc with
// --sample, or a trace recorded sampled) holds the sample's integers
// multiplied by 1/rate, an integer: the Horvitz-Thompson estimate of each
// count for the whole trace. Rates (promotion rates, savings) are ratios of
// two such counts, so they are the sample's own. The error bound of each
// metric comes from the same setting's results on k disjoint random
// sub-samples of the sample (the random-group method): see [Result.Bound].

// Metric is one of the metrics a Record prints, by its CSV name.
type Metric struct {
	Name  string
	Value func(*Result) float64
}

// Metrics are the metrics of SPEC section 6 in CSV order, each with its
// value as a float.
var Metrics = []Metric{
	{"max_pr", (*Result).MaxPR},
	{"p99_pr", func(r *Result) float64 { return r.Percentile(99) }},
	{"p98_pr", func(r *Result) float64 { return r.Percentile(98) }},
	{"mean_pr", (*Result).MeanPR},
	{"promotions", func(r *Result) float64 { return float64(r.TotalPromotions()) }},
	{"saved_page_windows", func(r *Result) float64 { return float64(r.Saved) }},
	{"alive_page_windows", func(r *Result) float64 { return float64(r.Alive) }},
	{"savings", (*Result).Savings},
	{"avg_saved_bytes", (*Result).AvgSavedBytes},
}

// MetricByName returns the metric named name (a CSV column or a Stat).
func MetricByName(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Sampled reports whether r is an estimate from a sample.
func (r *Result) Sampled() bool { return r.SamplePPM > 0 && r.SamplePPM < 1_000_000 }

// Bound returns the half-width of an approximate 95% confidence interval
// of metric m's estimate, from the k sub-samples' results r.Groups (each
// an estimate on its own, scaled by k/rate):
//
//	bound = t(0.975, k-1) * sqrt((1 - rate) * sum_g (m_g - mean)^2 / (k (k-1)))
//
// that is Student's t times the random-group standard error, with the
// finite-population correction 1 - rate (0 for a 100% sample). For a
// count the full sample's estimate is the mean of the groups' (the groups
// partition it), and the bound is the usual one; for a ratio or a
// percentile of per-window rates (max_pr above all) each group's value is
// computed on 1/k of the sample and is noisier than the full sample's, so
// the bound is conservative there. It is 0 for a run that is not sampled.
func (r *Result) Bound(m Metric) float64 {
	if len(r.Groups) < 2 || !r.Sampled() {
		return 0
	}
	vals := make([]float64, len(r.Groups))
	for g, gr := range r.Groups {
		vals[g] = m.Value(gr)
	}
	return GroupBound(r.SamplePPM, vals)
}

// GroupBound is the random-group bound of [Result.Bound] for any estimate
// whose value on each of k sub-samples of a sample of rate ppm is vals[g]:
// a difference of two runs' metrics (OPP's headroom), or a sum over many
// runs (a fleet's totals). It is 0 for fewer than two groups or a rate of
// 100% (or more, or none).
func GroupBound(ppm int64, vals []float64) float64 {
	k := len(vals)
	if k < 2 || ppm <= 0 || ppm >= 1_000_000 {
		return 0
	}
	mean := 0.0
	for _, v := range vals {
		mean += v
	}
	mean /= float64(k)
	ss := 0.0
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	f := float64(ppm) / 1e6
	return studentT975(k-1) * math.Sqrt((1-f)*ss/float64(k*(k-1)))
}

// t975 is Student's t distribution's 0.975 quantile for 1..30 degrees of
// freedom (any statistics table).
var t975 = [...]float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// studentT975 returns t(0.975, df): the table, or beyond it the
// Cornish-Fisher expansion z + (z^3+z)/(4 df) + (5z^5+16z^3+3z)/(96 df^2)
// (within 0.001 of the exact value from 30 degrees of freedom on).
func studentT975(df int) float64 {
	if df < len(t975) {
		return t975[df]
	}
	const z = 1.959964
	d := float64(df)
	return z + (z*z*z+z)/(4*d) + (5*math.Pow(z, 5)+16*z*z*z+3*z)/(96*d*d)
}

// SampleHeader is the CSV columns a sampled run adds after CSVHeader: the
// rate, then each metric's error bound.
func SampleHeader() []string {
	h := []string{"sample_rate"}
	for _, m := range Metrics {
		h = append(h, m.Name+"_err")
	}
	return h
}

// Errors are the error bounds of a sampled run's metrics ([Result.Bound]),
// in the order and under the names of its Record's fields.
type Errors struct {
	MaxPR            jsonFloat `json:"max_pr"`
	P99PR            jsonFloat `json:"p99_pr"`
	P98PR            jsonFloat `json:"p98_pr"`
	MeanPR           jsonFloat `json:"mean_pr"`
	Promotions       jsonFloat `json:"promotions"`
	SavedPageWindows jsonFloat `json:"saved_page_windows"`
	AlivePageWindows jsonFloat `json:"alive_page_windows"`
	Savings          jsonFloat `json:"savings"`
	AvgSavedBytes    jsonFloat `json:"avg_saved_bytes"`
}

func (e *Errors) list() []*jsonFloat {
	return []*jsonFloat{&e.MaxPR, &e.P99PR, &e.P98PR, &e.MeanPR, &e.Promotions, &e.SavedPageWindows, &e.AlivePageWindows, &e.Savings, &e.AvgSavedBytes}
}

// Errors returns the bounds of every metric, or nil if r is not sampled
// or has no sub-samples to bound it by.
func (r *Result) Errors() *Errors {
	if !r.Sampled() || len(r.Groups) < 2 {
		return nil
	}
	e := &Errors{}
	for i, f := range e.list() {
		b, ok := r.PrintedBound(Metrics[i])
		if !ok {
			b = math.NaN() // no bound: null in JSON, empty in CSV
		}
		*f = jsonFloat(b)
	}
	return e
}

// csv returns the sample's CSV columns (SampleHeader) of a record.
func (rec Record) sampleRow() []string {
	row := []string{FormatFloat(float64(rec.SampleRate))}
	if rec.Err == nil {
		return append(row, make([]string, len(Metrics))...) // no sub-samples: no bounds
	}
	for _, f := range rec.Err.list() {
		if math.IsNaN(float64(*f)) {
			row = append(row, "")
			continue
		}
		row = append(row, FormatFloat(float64(*f)))
	}
	return row
}

// Scaled returns a copy of r with every count multiplied by n, marked as a
// run on a sample of rate ppm: how a run on a sampled trace that has no
// sub-samples (the simulator's) becomes an estimate. Its bounds are
// unknown.
func (r *Result) Scaled(n, ppm int64) *Result {
	c := *r
	c.SamplePPM, c.Groups = ppm, nil
	c.Saved, c.Alive, c.PromotionTotal = r.Saved*n, r.Alive*n, r.PromotionTotal*n
	mul := func(v []int64) []int64 {
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = x * n
		}
		return out
	}
	c.Promotions, c.Accessed = mul(r.Promotions), mul(r.Accessed)
	c.SavedPerWindow, c.AlivePerWindow = mul(r.SavedPerWindow), mul(r.AlivePerWindow)
	return &c
}

// Bounded reports whether a sampled run of policy prints an error bound
// for metric m at all (see [Result.PrintedBound]).
func Bounded(policy string, m Metric) bool {
	switch m.Name {
	case "saved_page_windows", "alive_page_windows", "avg_saved_bytes":
		return true
	case "promotions":
		return policy != "opp"
	}
	return false
}

// MinBoundPages is the fewest sampled pages for which a sampled run prints
// error bounds: below it the sub-samples hold a few dozen pages each, and
// their spread says little (docs/bench.md, "Sampled curves").
const MinBoundPages = 1000

// SmallSample returns what a sampled run must say loudly of its sample, or
// "" if nothing: that it keeps none of the trace's pages (every estimate is
// 0), or that it holds fewer than MinBoundPages pages (no bounds, and
// estimates that may be far off). mdk mpc, tune and report print it as a
// WARNING.
func (r *Result) SmallSample() string {
	if !r.Sampled() {
		return ""
	}
	rate := strconv.FormatFloat(float64(r.SamplePPM)/1e4, 'f', -1, 64) + "%"
	switch n := r.SamplePages; {
	case n == 0 && r.Alive == 0:
		return fmt.Sprintf("the %s sample keeps none of the trace's pages: every estimate is 0 and says nothing about the trace; use a higher --sample rate", rate)
	case n > 0 && n < MinBoundPages:
		return fmt.Sprintf("the %s sample holds only %d pages (fewer than %d): its estimates are printed without error bounds and may be far off; use a higher --sample rate", rate, n, MinBoundPages)
	}
	return ""
}

// PrintedBound returns the bound printed beside metric m's estimate
// ([Result.Bound]), and whether one is printed. Bounds are printed only
// where they held on the coverage table of docs/bench.md (the exact value
// within the bound for at least 90% of the default settings of each
// policy, at each rate): for the counts saved_page_windows and
// alive_page_windows, for avg_saved_bytes, and for promotions except
// OPP's. None is printed for the ratios and statistics of per-window
// rates (savings, mean_pr, max_pr, p99_pr, p98_pr: the sample's noisy
// small windows bias them in a way the sub-samples' spread does not show),
// nor for OPP's promotions (its budgets follow the accessed counts, whose
// spread between sub-samples understates the error); none for a run that
// is not sampled or has no sub-samples, for a sample of fewer than
// MinBoundPages pages (when the run knows its count), or where every
// sub-sample gives the same value (a bound of 0 would claim an exact
// estimate).
func (r *Result) PrintedBound(m Metric) (float64, bool) {
	if !r.Sampled() || len(r.Groups) < 2 || !Bounded(r.Policy, m) {
		return 0, false
	}
	if r.SamplePages > 0 && r.SamplePages < MinBoundPages {
		return 0, false
	}
	b := r.Bound(m)
	if b == 0 || math.IsNaN(b) {
		return 0, false
	}
	return b, true
}
