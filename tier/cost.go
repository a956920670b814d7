package tier

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"time"

	"mdk/result"
)

// Cost is what one setting's result means on a tier (docs/tiers.md):
//
//	net_avg_saved_bytes      = S x page_size x (1 - f) / W
//	net_savings              = S x (1 - f) / L
//	stall_seconds_per_window = promotions x m / W
//	slowdown                 = stall_seconds_per_window / window
//	max_slowdown             = max over windows w of promotions_w x m / window
//
// where f is the tier's stored fraction (local memory the tier keeps per
// page it holds, over the page size), m the tier's mean promotion latency in
// seconds and window the trace's window length in seconds. The slowdown is
// stall seconds per second of the window: 0.01 means the job loses 1% of its
// time to promotions (a job that stalls on each one; one that overlaps them
// loses less).
type Cost struct {
	NetAvgSavedBytes      float64
	NetSavings            float64
	StallSecondsPerWindow float64
	Slowdown              float64
	MaxSlowdown           float64
}

// Columns are the CSV columns of a Cost, appended after SPEC section 6's
// when a tier is given (`--tier`); the JSON records use the same keys.
var Columns = []string{"net_avg_saved_bytes", "net_savings", "stall_seconds_per_window", "slowdown", "max_slowdown"}

// Counts are the integers of a run that a Cost is computed from: saved and
// alive page-windows, promotions (in all and in the worst window), windows
// and the page size.
type Counts struct {
	Saved, Alive, Promotions, MaxPromotions int64
	Windows                                 int
	PageSize                                int64
}

// CountsOf returns r's counts.
func CountsOf(r *result.Result) Counts {
	c := Counts{Saved: r.Saved, Alive: r.Alive, Promotions: r.TotalPromotions(), Windows: r.Windows(), PageSize: r.PageSize}
	for _, p := range r.Promotions {
		c.MaxPromotions = max(c.MaxPromotions, p)
	}
	return c
}

// Cost returns the cost of r on t for a trace of the given window length.
func (t *Tier) Cost(r *result.Result, window time.Duration) Cost {
	return t.CostOf(CountsOf(r), window)
}

// CostOf returns the cost of a run with counts n. Each number is one
// division of products (exact in float64 while they stay below 2^53), so it
// is the correctly rounded value of its formula.
func (t *Tier) CostOf(n Counts, window time.Duration) Cost {
	var c Cost
	w := float64(n.Windows)
	keep := 1 - t.StoredFraction()
	mean := t.PromotionNs.Mean // nanoseconds per promotion
	stallNs := float64(n.Promotions) * mean
	if w > 0 {
		c.NetAvgSavedBytes = float64(n.Saved) * float64(n.PageSize) * keep / w
		c.StallSecondsPerWindow = stallNs / w / 1e9
	}
	if n.Alive > 0 {
		c.NetSavings = float64(n.Saved) * keep / float64(n.Alive)
	}
	if ns := float64(window.Nanoseconds()); ns > 0 && w > 0 {
		c.Slowdown = stallNs / (w * ns)
		c.MaxSlowdown = float64(n.MaxPromotions) * mean / ns
	}
	return c
}

// Row returns c's values under Columns.
func (c Cost) Row() []string {
	f := result.FormatFloat
	return []string{f(c.NetAvgSavedBytes), f(c.NetSavings), f(c.StallSecondsPerWindow), f(c.Slowdown), f(c.MaxSlowdown)}
}

// Metric names a number of a Cost that can be an axis or a target, beside
// result's promotion-rate statistics.
type Metric string

const (
	Slowdown    Metric = "slowdown"
	MaxSlowdown Metric = "max_slowdown"
)

// Metrics lists the Cost numbers usable as targets.
var Metrics = []Metric{Slowdown, MaxSlowdown}

// ParseMetric returns the metric named s.
func ParseMetric(s string) (Metric, bool) {
	for _, m := range Metrics {
		if string(m) == s {
			return m, true
		}
	}
	return "", false
}

// Of returns the metric m of c.
func (c Cost) Of(m Metric) float64 {
	switch m {
	case Slowdown:
		return c.Slowdown
	case MaxSlowdown:
		return c.MaxSlowdown
	}
	panic("tier: unknown metric " + string(m))
}

// Func returns m as a function of a result on t, for result.BestBy.
func (t *Tier) Func(m Metric, window time.Duration) func(*result.Result) float64 {
	return func(r *result.Result) float64 { c := t.Cost(r, window); return c.Of(m) }
}

// WriteCSV writes SPEC section 6's header and rows followed by Columns.
func (t *Tier) WriteCSV(w io.Writer, rs []*result.Result, window time.Duration) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(append([]string{}, result.CSVHeader...), Columns...)); err != nil {
		return err
	}
	for _, r := range rs {
		c := t.Cost(r, window)
		if err := cw.Write(append(r.Record(false).CSVRow(), c.Row()...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Record is SPEC section 6's record with the Cost's keys added.
type Record struct {
	result.Record
	NetAvgSavedBytes      jsonFloat `json:"net_avg_saved_bytes"`
	NetSavings            jsonFloat `json:"net_savings"`
	StallSecondsPerWindow jsonFloat `json:"stall_seconds_per_window"`
	Slowdown              jsonFloat `json:"slowdown"`
	MaxSlowdown           jsonFloat `json:"max_slowdown"`
}

// Record returns r's record with its cost on t.
func (t *Tier) Record(r *result.Result, window time.Duration) Record {
	c := t.Cost(r, window)
	return Record{Record: r.Record(false), NetAvgSavedBytes: jsonFloat(c.NetAvgSavedBytes), NetSavings: jsonFloat(c.NetSavings),
		StallSecondsPerWindow: jsonFloat(c.StallSecondsPerWindow), Slowdown: jsonFloat(c.Slowdown), MaxSlowdown: jsonFloat(c.MaxSlowdown)}
}

// WriteJSON writes the results as result.WriteJSON does, each record with
// the Cost's keys added.
func (t *Tier) WriteJSON(w io.Writer, rs []*result.Result, window time.Duration) error {
	recs := make([]Record, len(rs))
	for i, r := range rs {
		recs[i] = t.Record(r, window)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(recs)
}

// jsonFloat marshals with result.FormatFloat, as result's records do.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) { return []byte(result.FormatFloat(float64(f))), nil }
