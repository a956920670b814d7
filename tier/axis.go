package tier

import (
	"strings"
	"time"

	"mdk/result"
)

// Axis is what an x axis, a target or an SLO is on, and says which of the
// two kinds it is: a statistic of the per-window promotion rates
// (result.Stat: max_pr, p99_pr, p98_pr, mean_pr), or a tier metric of the
// result's cost on a tier (Metric: slowdown, max_slowdown), which needs a
// tier and the trace's window length. The decisions that depend on the kind
// are its methods.
type Axis struct {
	Stat   result.Stat // set for a promotion-rate statistic
	Metric Metric      // set for a tier metric
}

// ParseAxis returns the axis named s: a statistic or a tier metric.
func ParseAxis(s string) (Axis, bool) {
	if st, ok := result.ParseStat(s); ok {
		return Axis{Stat: st}, true
	}
	if m, ok := ParseMetric(s); ok {
		return Axis{Metric: m}, true
	}
	return Axis{}, false
}

// StatAxis is the axis of a promotion-rate statistic.
func StatAxis(st result.Stat) Axis { return Axis{Stat: st} }

// Valid reports whether a names a statistic (result.Stats) or a tier
// metric ([Metrics]), but not both: what ParseAxis returns.
func (a Axis) Valid() bool {
	if a.IsTier() {
		_, ok := ParseMetric(string(a.Metric))
		return ok && a.Stat == ""
	}
	_, ok := result.ParseStat(string(a.Stat))
	return ok
}

// IsTier reports whether a is a tier metric.
func (a Axis) IsTier() bool { return a.Metric != "" }

// String is the axis's name, as ParseAxis reads it.
func (a Axis) String() string {
	if a.IsTier() {
		return string(a.Metric)
	}
	return string(a.Stat)
}

// Label names the axis for a plot.
func (a Axis) Label() string {
	switch a.Metric {
	case Slowdown:
		return "slowdown (stall s per s)"
	case MaxSlowdown:
		return "max slowdown (worst window)"
	}
	return strings.ReplaceAll(string(a.Stat), "_", " ")
}

// Func returns the axis as a function of a result: the statistic, or the
// tier metric of the result's cost on t for a trace of the given window
// length (t may be nil for a statistic).
func (a Axis) Func(t *Tier, window time.Duration) func(*result.Result) float64 {
	return func(r *result.Result) float64 { return a.Of(r, t, window) }
}

// Of returns r's value on the axis: the statistic, or the tier metric of
// r's cost on t for a trace of the given window length (t may be nil for a
// statistic).
func (a Axis) Of(r *result.Result, t *Tier, window time.Duration) float64 {
	if a.IsTier() {
		return t.Cost(r, window).Of(a.Metric)
	}
	return r.Stat(a.Stat)
}
