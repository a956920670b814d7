package tune

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"mdk/policy"
	"mdk/result"
)

// SLO is a service-level objective on a promotion-rate statistic: the
// statistic must be at most PPM parts per million.
type SLO struct {
	Stat result.Stat
	PPM  int64
}

// ParseSLO parses STAT<=RATE, for example "max_pr<=2%" or "p99_pr <= 0.005".
// STAT is max_pr, p99_pr, p98_pr or mean_pr; RATE is a percentage or a
// fraction ([policy.ParseRate]). Only <= is accepted.
func ParseSLO(s string) (SLO, error) {
	lhs, rhs, ok := strings.Cut(s, "<=")
	if !ok {
		return SLO{}, fmt.Errorf("bad SLO %q: want STAT<=RATE such as max_pr<=2%% (only <= is supported)", s)
	}
	name := strings.TrimSpace(lhs)
	st, ok := result.ParseStat(name)
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
func (s SLO) String() string { return string(s.Stat) + "<=" + policy.FormatRate(s.PPM) }

// Meets reports whether r's statistic is within the bound.
func (s SLO) Meets(r *result.Result) bool { return r.Stat(s.Stat) <= s.Bound() }

// BrokenWindows counts the windows of r whose promotion rate exceeds the
// bound, compared exactly in integers: promotions*1e6 > PPM*accessed.
func (s SLO) BrokenWindows(r *result.Result) int {
	n := 0
	for w, p := range r.Promotions {
		if p*policy.MaxPPM > s.PPM*r.Accessed[w] {
			n++
		}
	}
	return n
}

// Measure returns r's metrics under s, as Run reports them for a part.
func (s SLO) Measure(r *result.Result) *Metrics {
	m := &Metrics{
		Stat:             r.Stat(s.Stat),
		Savings:          r.Savings(),
		SavedPageWindows: r.Saved,
		AlivePageWindows: r.Alive,
		Promotions:       r.TotalPromotions(),
		Windows:          r.Windows(),
		BrokenWindows:    s.BrokenWindows(r),
		MeetsSLO:         s.Meets(r),
	}
	if r.Sampled() {
		stat, _ := result.MetricByName(string(s.Stat))
		sav, _ := result.MetricByName("savings")
		m.Err = &MetricsErr{Stat: r.Bound(stat), Savings: r.Bound(sav)}
	}
	return m
}

// MarshalJSON writes {"spec": "max_pr<=2%", "stat": "max_pr", "bound": 0.02, "bound_ppm": 20000}.
func (s SLO) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(struct {
		Spec     string  `json:"spec"`
		Stat     string  `json:"stat"`
		Bound    float64 `json:"bound"`
		BoundPPM int64   `json:"bound_ppm"`
	}{s.String(), string(s.Stat), s.Bound(), s.PPM})
	return bytes.TrimSpace(b.Bytes()), err
}
