package tune

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"mdk/policy"
	"mdk/result"
	"mdk/tier"
)

// SLO is a service-level objective on a promotion-rate statistic, or on a
// tier model's slowdown estimate: the statistic must be at most PPM parts
// per million.
//
// Stat says which ([tier.Axis]): a promotion-rate statistic
// (result.Stats), or a tier metric (tier.Metrics: slowdown, max_slowdown).
// A tier metric needs Tier, and Window, the traces' window length ([Run]
// sets it): the statistic of a result is then its cost on Tier
// ([tier.Tier.Cost]), and a window breaks the SLO when its own slowdown,
// promotions_w x m / window, exceeds the bound.
type SLO struct {
	Stat   tier.Axis
	PPM    int64
	Tier   *tier.Tier
	Window time.Duration
}

// IsTier reports whether s is on a tier metric (slowdown, max_slowdown).
func (s SLO) IsTier() bool { return s.Stat.IsTier() }

// Check reports an SLO whose statistic is unknown, or on a tier metric
// without a tier.
func (s SLO) Check() error {
	if !s.Stat.Valid() {
		return fmt.Errorf("tune: unknown statistic %q (known: %s)", s.Stat, statNames())
	}
	if s.IsTier() && s.Tier == nil {
		return fmt.Errorf("tune: the SLO %s is on the tier model's slowdown estimate: it needs a tier (--tier)", s)
	}
	return nil
}

// Value returns r's statistic under s: the promotion-rate statistic, or the
// tier metric of r's cost on s.Tier.
func (s SLO) Value(r *result.Result) float64 { return s.Stat.Of(r, s.Tier, s.Window) }

// broken reports whether window w of r breaks the bound: its promotion
// rate, compared exactly in integers (promotions*1e6 > PPM*accessed), or
// for a tier metric its own slowdown (tier's arithmetic on that window).
func (s SLO) broken(r *result.Result, w int) bool {
	if s.IsTier() {
		p := r.Promotions[w]
		return s.Tier.CostOf(tier.Counts{Promotions: p, MaxPromotions: p, Windows: 1}, s.Window).MaxSlowdown > s.Bound()
	}
	return r.Promotions[w]*policy.MaxPPM > s.PPM*r.Accessed[w]
}

// bestIndex is result.BestIndex with s's statistic: of the settings idx
// whose statistic on r(k) is within the bound, the one with the most
// savings, ties to the lower statistic, then the earlier setting; -1 if
// none.
func (s SLO) bestIndex(idx []int, r func(k int) *result.Result) int {
	if !s.IsTier() {
		return result.BestIndex(idx, r, s.Stat.Stat, s.Bound())
	}
	rs := make([]*result.Result, len(idx))
	for j, k := range idx {
		rs[j] = r(k)
	}
	if b := result.BestBy(rs, s.Value, s.Bound()); b != nil {
		for j, x := range rs {
			if x == b {
				return idx[j]
			}
		}
	}
	return -1
}

// ParseSLO parses STAT<=RATE, for example "max_pr<=2%" or "p99_pr <= 0.005".
// STAT is max_pr, p99_pr, p98_pr or mean_pr, or a tier metric (slowdown,
// max_slowdown: the caller must set Tier, [SLO.Check]); RATE is a
// percentage or a fraction ([policy.ParseRate]). Only <= is accepted.
func ParseSLO(s string) (SLO, error) {
	lhs, rhs, ok := strings.Cut(s, "<=")
	if !ok {
		return SLO{}, fmt.Errorf("bad SLO %q: want STAT<=RATE such as max_pr<=2%% (only <= is supported)", s)
	}
	name := strings.TrimSpace(lhs)
	st, ok := tier.ParseAxis(name)
	if !ok {
		return SLO{}, fmt.Errorf("bad SLO %q: unknown statistic %q (known: %s)", s, name, statNames())
	}
	rate := strings.TrimSpace(rhs)
	if rate == "" {
		return SLO{}, fmt.Errorf("bad SLO %q: missing rate after <= (such as 2%% or 0.02)", s)
	}
	ppm, err := policy.ParseRate(rate)
	if err != nil {
		return SLO{}, fmt.Errorf("bad SLO %q: %w", s, err)
	}
	return SLO{Stat: st, PPM: ppm}, nil
}

func statNames() string {
	var names []string
	for _, st := range result.Stats {
		names = append(names, string(st))
	}

	return strings.Join(names, ", ")
}

// Bound returns the bound as a fraction.
func (s SLO) Bound() float64 { return float64(s.PPM) / policy.MaxPPM }

// String formats s as ParseSLO reads it: "max_pr<=2%".
func (s SLO) String() string { return s.Stat.String() + "<=" + policy.FormatRate(s.PPM) }

// Meets reports whether r's statistic is within the bound.
func (s SLO) Meets(r *result.Result) bool { return s.Value(r) <= s.Bound() }

// BrokenWindows counts the windows of r whose promotion rate exceeds the
// bound, compared exactly in integers: promotions*1e6 > PPM*accessed; for a
// tier metric, the windows whose own slowdown exceeds the bound.
func (s SLO) BrokenWindows(r *result.Result) int {
	n := 0
	for w := range r.Promotions {
		if s.broken(r, w) {
			n++
		}
	}
	return n
}

// Measure returns r's metrics under s, as Run reports them for a part.
func (s SLO) Measure(r *result.Result) *Metrics {
	m := &Metrics{
		Stat:             s.Value(r),
		Savings:          r.Savings(),
		SavedPageWindows: r.Saved,
		AlivePageWindows: r.Alive,
		Promotions:       r.TotalPromotions(),
		Windows:          r.Windows(),
		BrokenWindows:    s.BrokenWindows(r),
		MeetsSLO:         s.Meets(r),
	}
	if r.Sampled() {
		stat, ok := result.MetricByName(s.Stat.String())
		if !ok {
			stat = result.Metric{Name: s.Stat.String(), Value: s.Value}
		}
		sav, _ := result.MetricByName("savings")
		bound := func(m result.Metric) *float64 {
			if b, ok := r.PrintedBound(m); ok {
				return &b
			}
			return nil
		}
		m.Err = &MetricsErr{Stat: bound(stat), Savings: bound(sav)}
	}
	return m
}

// MarshalJSON writes {"spec": "max_pr<=2%", "stat": "max_pr", "bound": 0.02, "bound_ppm": 20000},
// and for a tier metric "tier" too, the tier's name.
func (s SLO) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	v := struct {
		Spec     string  `json:"spec"`
		Stat     string  `json:"stat"`
		Bound    float64 `json:"bound"`
		BoundPPM int64   `json:"bound_ppm"`
		Tier     string  `json:"tier,omitempty"`
	}{s.String(), s.Stat.String(), s.Bound(), s.PPM, ""}
	if s.IsTier() && s.Tier != nil {
		v.Tier = s.Tier.Name
	}
	err := enc.Encode(v)
	return bytes.TrimSpace(b.Bytes()), err
}
