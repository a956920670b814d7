package policy

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"mdk/trace"
)

// Senpai's defaults: senpai.py's (facebookincubator/senpai), in its units.
const (
	SenpaiPressureUS   = 10_000          // --pressure: 10 ms of stall per interval, in microseconds
	SenpaiInterval     = 6 * time.Second // --interval
	SenpaiMaxProbe     = 0.01            // --max-probe
	SenpaiMaxBackoff   = 1.0             // --max-backoff
	SenpaiCoeffProbe   = 10              // --coeff-probe
	SenpaiCoeffBackoff = 20              // --coeff-backoff
	SenpaiMinSize      = 100 << 20       // --min-size, bytes
	SenpaiMaxSize      = 100 << 30       // --max-size, bytes
	// SenpaiTick is how often senpai.py runs its loop (time.sleep(1)).
	SenpaiTick = time.Second
)

// Senpai is Meta's Senpai (TMO, ASPLOS'22) as a [Controller]: senpai.py's
// loop, with its knobs and defaults, over a memory limit that mdk applies
// as a capacity ([LRU]) at every scan point; the pressure it reads is
// modelled from the tier: each promotion stalls the job for PromotionNS.
// The rule, and what it leaves out of the real system, is in
// docs/policies.md ("senpai").
type Senpai struct {
	PressureUS               float64       // target stall per interval, microseconds
	Interval                 time.Duration // ticks between adjustments (senpai's grace period)
	MaxProbe, MaxBackoff     float64
	CoeffProbe, CoeffBackoff float64
	MinSize, MaxSize         int64 // bytes
	// PromotionNS is the stall of one promotion (the tier's mean swap-in
	// latency, nanoseconds): the spec's swapin_ns, or set by the caller
	// from --tier. Params prints it once set, so that a spec recorded
	// from a run (run.json) repeats the run.
	PromotionNS float64
}

// NewSenpai returns senpai at senpai.py's defaults.
func NewSenpai() *Senpai {
	return &Senpai{PressureUS: SenpaiPressureUS, Interval: SenpaiInterval, MaxProbe: SenpaiMaxProbe,
		MaxBackoff: SenpaiMaxBackoff, CoeffProbe: SenpaiCoeffProbe, CoeffBackoff: SenpaiCoeffBackoff,
		MinSize: SenpaiMinSize, MaxSize: SenpaiMaxSize}
}

// Policy returns "senpai".
func (s *Senpai) Policy() string { return "senpai" }

// Params returns every key: "pressure=10ms,interval=6s,max_probe=0.01,...".
func (s *Senpai) Params() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	swapin := ""
	if s.PromotionNS > 0 {
		swapin = ",swapin_ns=" + f(s.PromotionNS)
	}
	return "pressure=" + time.Duration(s.PressureUS*1000).String() + ",interval=" + s.Interval.String() +
		",max_probe=" + f(s.MaxProbe) + ",max_backoff=" + f(s.MaxBackoff) +
		",coeff_probe=" + f(s.CoeffProbe) + ",coeff_backoff=" + f(s.CoeffBackoff) +
		",min_size=" + FormatSize(s.MinSize) + ",max_size=" + FormatSize(s.MaxSize) + swapin
}

// IsSenpai reports whether spec names the senpai controller.
func IsSenpai(spec string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return strings.TrimSpace(name) == "senpai"
}

// ParseSenpai parses a senpai spec: "senpai" (the defaults) or
// "senpai:KEY=VALUE,...", one value per key. pressure is a duration or a
// number of microseconds (senpai.py's unit); interval a duration or a number
// of seconds; max_probe and max_backoff fractions (0.01) or percentages
// (1%); coeff_probe and coeff_backoff positive numbers; min_size and
// max_size bytes, with an optional binary suffix K, M, G or T as memory.high
// takes them (100M); swapin_ns the stall of one promotion in nanoseconds
// (what --tier gives otherwise). Errors are [*SpecError]s.
func ParseSenpai(spec string) (*Senpai, error) {
	spec = strings.TrimSpace(spec)
	name, rest, has := strings.Cut(spec, ":")
	if strings.TrimSpace(name) != "senpai" {
		return nil, specErrorf(spec, "not a senpai spec")
	}
	s := NewSenpai()
	if !has {
		return s, nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimSpace(part)
		where := "senpai:" + part
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, specErrorf(where, "want KEY=VALUE, got %q (senpai keys: %s)", part, senpaiKeys)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if seen[k] {
			return nil, specErrorf(where, "duplicate key %q", k)
		}
		seen[k] = true
		if strings.ContainsAny(v, "|") || strings.Contains(v, "..") {
			return nil, specErrorf(where, "senpai takes one value per key (a controller is one setting)")
		}
		var err error
		switch k {
		case "pressure":
			var d time.Duration
			d, err = parseDurationOr(v, time.Microsecond)
			s.PressureUS = float64(d) / 1000
			if err == nil && d <= 0 {
				err = fmt.Errorf("pressure must be positive")
			}
		case "interval":
			s.Interval, err = parseDurationOr(v, time.Second)
			if err == nil && s.Interval <= 0 {
				err = fmt.Errorf("interval must be positive")
			}
		case "max_probe":
			s.MaxProbe, err = parseFraction(v, 1)
		case "max_backoff":
			s.MaxBackoff, err = parseFraction(v, math.Inf(1))
		case "coeff_probe", "coeff_backoff":
			var c float64
			if c, err = strconv.ParseFloat(v, 64); err != nil || !(c > 0) || math.IsInf(c, 0) {
				err = fmt.Errorf("bad value %q: want a positive number", v)
			}
			if k == "coeff_probe" {
				s.CoeffProbe = c
			} else {
				s.CoeffBackoff = c
			}
		case "swapin_ns":
			if s.PromotionNS, err = strconv.ParseFloat(v, 64); err != nil || !(s.PromotionNS > 0) || math.IsInf(s.PromotionNS, 0) {
				err = fmt.Errorf("bad value %q: want a positive number of nanoseconds", v)
			}
		case "min_size":
			s.MinSize, err = ParseSize(v)
		case "max_size":
			s.MaxSize, err = ParseSize(v)
		default:
			return nil, specErrorf(where, "unknown key %q (senpai keys: %s)", k, senpaiKeys)
		}
		if err != nil {
			return nil, specErrorf(where, "%s", err)
		}
	}
	if s.MinSize > s.MaxSize {
		return nil, specErrorf(spec, "min_size %s is above max_size %s", FormatSize(s.MinSize), FormatSize(s.MaxSize))
	}
	return s, nil
}

const senpaiKeys = "pressure, interval, max_probe, max_backoff, coeff_probe, coeff_backoff, min_size, max_size, swapin_ns"

// parseDurationOr parses a Go duration, or a plain number of units.
func parseDurationOr(v string, unit time.Duration) (time.Duration, error) {
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > math.MaxInt64/int64(unit) {
			return 0, fmt.Errorf("%s is too large", v)
		}
		return time.Duration(n) * unit, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("bad value %q: want a duration such as 10ms or a number of %s", v, strings.TrimPrefix(unit.String(), "1"))
	}
	return d, nil
}

// parseFraction parses a fraction (0.01) or a percentage (1%) in [0, hi].
func parseFraction(v string, hi float64) (float64, error) {
	num, pct := strings.CutSuffix(v, "%")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("bad value %q: want a fraction such as 0.01 or a percentage such as 1%%", v)
	}
	if pct {
		f /= 100
	}
	if f < 0 || f > hi {
		return 0, fmt.Errorf("%s is out of range (0 to %s)", v, strconv.FormatFloat(hi, 'g', -1, 64))
	}
	return f, nil
}

// ParseSize parses a size in bytes: digits with an optional binary suffix
// K, M, G or T (as the kernel's memory.high takes them; "KiB" style too).
func ParseSize(v string) (int64, error) {
	num := strings.TrimSuffix(strings.TrimSuffix(v, "B"), "i")
	shift := 0
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'K', 'k':
			shift = 10
		case 'M', 'm':
			shift = 20
		case 'G', 'g':
			shift = 30
		case 'T', 't':
			shift = 40
		}
		if shift > 0 {
			num = num[:n-1]
		}
	}
	if !isDigits(num) {
		return 0, fmt.Errorf("bad size %q: want bytes, or with a suffix K, M, G or T (100M)", v)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %s is too large", v)
	}
	return n << shift, nil
}

// FormatSize formats bytes with the largest binary suffix that divides them
// ("100M"), as ParseSize reads them.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s     string
		shift uint
	}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// parseSenpaiKeys is senpai's entry of the controller table
// ([ParseController]): the keys as [ParseSenpai] reads them, its pressure
// modelled on o's promotion cost (each promotion stalls the job for the
// tier's mean swap-in latency). A spec that gives swapin_ns itself (a run's
// recorded setting) needs no tier; otherwise one is required, and both is
// an error.
func parseSenpaiKeys(keys []KeyValue, o ControllerOptions) (Controller, error) {
	spec := "senpai"
	for i, kv := range keys {
		sep := ","
		if i == 0 {
			sep = ":"
		}
		spec += sep + kv.Key + "=" + kv.Value
	}
	s, err := ParseSenpai(spec)
	if err != nil {
		return nil, err
	}
	switch {
	case s.PromotionNS > 0 && o.PromotionNS > 0:
		return nil, specErrorf(spec, "give the swap-in latency by --tier or by swapin_ns, not both")
	case o.PromotionNS > 0:
		s.PromotionNS = o.PromotionNS
	case s.PromotionNS <= 0:
		return nil, specErrorf(spec, "senpai models memory pressure as promotions x the tier's swap-in latency: it needs a tier (--tier zram, or a tier file)")
	}
	return s, nil
}

// Settings returns the fixed settings senpai is compared with (mdk tune's
// "fixed on train" and "in hindsight"): lru's default grid, the fixed
// capacities its limit moves between.
func (s *Senpai) Settings() []Setting { return lruGrid(0) }

// NewRun starts a run over windows of h: senpai.py's state (the limit,
// the pressure integral since the last adjustment, the grace ticks left).
func (s *Senpai) NewRun(h trace.Header) ControlRun {
	ps := int64(h.PageSize)
	if ps <= 0 {
		ps = 4096
	}
	ticks := max(1, int64(h.Window/SenpaiTick))
	tick := h.Window / time.Duration(ticks)
	if tick <= 0 {
		tick = SenpaiTick
	}
	return &SenpaiRun{s: s, pageSize: ps, ticksPerWindow: int(ticks),
		interval: int(max(1, (s.Interval+tick-1)/tick)), limit: -1}
}

// SenpaiRun is one run of [Senpai].
type SenpaiRun struct {
	s              *Senpai
	pageSize       int64
	ticksPerWindow int
	interval       int // senpai.py's conf.interval, in ticks
	limit          int64
	integral       float64 // stall since the last adjustment, microseconds
	grace          int
	// Adjustments counts the probes and backoffs of the run so far.
	Probes, Backoffs int
}

// Start is no limit: senpai sets its first limit at the first scan point.
func (r *SenpaiRun) Start() Online { return LRU{C: Inf} }

// Limit returns the memory limit in force, in bytes (-1 before the first
// window's end).
func (r *SenpaiRun) Limit() int64 { return r.limit }

// EndWindow runs senpai's ticks of window w and names the capacity of its
// limit. At the end of window 0 senpai starts: its limit is memory.current,
// the window's resident pages, clamped to [min_size, max_size] and rounded
// down to a page (senpai.py's import_limit). At the end of every later
// window it runs the ticksPerWindow ticks that fell in the window, each
// with an equal share of the window's modelled stall (promotions x
// PromotionNS).
func (r *SenpaiRun) EndWindow(w *trace.Window, o Outcome) (Online, error) {
	if r.limit < 0 {
		r.limit = r.clamp((o.Alive - o.Saved) * r.pageSize)
		r.grace = r.interval
	} else {
		delta := float64(o.Promotions) * r.s.PromotionNS / 1000 / float64(r.ticksPerWindow)
		for range r.ticksPerWindow {
			r.tick(delta)
		}
	}
	return LRU{C: r.limit / r.pageSize}, nil
}

// tick is senpai.py's Senpai.tick with delta microseconds of new stall.
func (r *SenpaiRun) tick(delta float64) {
	s := r.s
	r.integral += delta
	if r.integral > s.PressureUS {
		err := r.integral / s.PressureUS
		adj := (err / s.CoeffBackoff) * (err / s.CoeffBackoff)
		adj = min(adj*s.MaxBackoff, s.MaxBackoff)
		r.adjust(adj)
		r.Backoffs++
		r.grace = r.interval - 1
		return
	}
	if r.grace > 0 {
		r.grace--
		return
	}
	err := s.PressureUS / max(r.integral, 1)
	adj := (err / s.CoeffProbe) * (err / s.CoeffProbe)
	adj = min(adj*s.MaxProbe, s.MaxProbe)
	r.adjust(-adj)
	r.Probes++
	r.grace = r.interval - 1
}

// adjust is senpai.py's scale_limit: limit + limit x factor, truncated,
// clamped and rounded down to a page; the integral restarts.
func (r *SenpaiRun) adjust(factor float64) {
	x := float64(r.limit)
	y := x + x*factor
	if y >= math.MaxInt64 {
		y = math.MaxInt64 / 2 // clamped below by max_size
	}
	r.limit = r.clamp(int64(y))
	r.integral = 0
}

func (r *SenpaiRun) clamp(b int64) int64 {
	b = max(r.s.MinSize, min(r.s.MaxSize, b))
	return b - b%r.pageSize
}

var _ Controller = (*Senpai)(nil)
