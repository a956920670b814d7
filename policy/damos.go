package policy

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"mdk/trace"
)

// damos's defaults (docs/policies.md, "damos"): DAMON_RECLAIM's
// (mm/damon/reclaim.c): min_age 120 s, a size quota of 128 MiB per 1 s
// reset interval, no quota goal.
const (
	DamosMinAge     = 2 * time.Minute
	DamosQuotaBytes = 128 << 20
	DamosQuotaPer   = time.Second
)

// Damos is DAMON's DAMOS pageout scheme as a [Controller]: pages idle for
// at least MinAge windows are paged out, at most the effective quota per
// window, the least recently used first ([Ration]); with a Goal the effective quota is tuned
// at every window's end by the kernel's feedback loop (Linux 6.12
// mm/damon/core.c, damos_set_effective_quota and
// damon_feed_loop_next_input). The rule is in docs/policies.md ("damos").
type Damos struct {
	MinAge int // windows
	// QuotaBytes and QuotaPer are the size quota: QuotaBytes bytes per
	// QuotaPer; with QuotaPer 0, QuotaBytes pages per window; QuotaBytes 0:
	// no size quota. [Damos.NewRun] converts it to bytes per window with
	// the trace's window and page size.
	QuotaBytes int64
	QuotaPer   time.Duration
	QuotaText  string // as written, for Params ("128M/1s", "inf")
	// Goal is the quota goal, if GoalMetric is not "": the window's
	// promotion rate ("pr") or modelled memory pressure ("psi") at most
	// GoalPPM.
	GoalMetric string
	GoalPPM    int64
	// PromotionNS is the tier's cost of one promotion, for a psi goal.
	PromotionNS float64
	Window      time.Duration
}

func parseDamos(kvs []KeyValue, o ControllerOptions) (Controller, error) {
	const keys = "min_age, quota, goal"
	d := &Damos{MinAge: windowsUp(DamosMinAge, o.Window), QuotaBytes: DamosQuotaBytes, QuotaPer: DamosQuotaPer, QuotaText: "128M/1s", Window: o.Window, PromotionNS: o.PromotionNS}
	for _, kv := range kvs {
		var err error
		switch kv.Key {
		case "min_age":
			d.MinAge, err = controllerCount("damos", kv, false, o.Window)
		case "quota":
			err = d.parseQuota(kv)
		case "goal":
			err = d.parseGoal(kv)
		default:
			err = unknownKey("damos", kv, keys)
		}
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

// parseQuota reads quota=N (pages per window), quota=SIZE/DURATION (bytes
// per duration: 128M/1s; sizes in binary units K, M, G, T) or quota=inf.
func (d *Damos) parseQuota(kv KeyValue) error {
	v := kv.Value
	d.QuotaText = v
	if v == "inf" {
		d.QuotaBytes, d.QuotaPer = 0, 0
		return nil
	}
	size, per, hasPer := strings.Cut(v, "/")
	if !hasPer {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return keyError("damos", kv, "want a number of pages per window of at least 1, SIZE/DURATION (128M/1s) or inf, got %q", v)
		}
		d.QuotaBytes, d.QuotaPer = n, 0 // pages per window
		return nil
	}
	b, err := parseSize(size)
	if err != nil || b < 1 {
		return keyError("damos", kv, "bad size %q: want bytes with an optional K, M, G or T (binary units), at least 1", size)
	}
	p, err := time.ParseDuration(per)
	if err != nil || p <= 0 {
		return keyError("damos", kv, "bad duration %q: want a positive Go duration such as 1s", per)
	}
	d.QuotaBytes, d.QuotaPer = b, p
	return nil
}

// parseSize parses bytes with an optional binary unit suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for i, u := range "KMGT" {
		if strings.HasSuffix(s, string(u)) {
			s, mult = strings.TrimSuffix(s, string(u)), int64(1)<<(10*(i+1))
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("bad size")
	}
	return n * mult, nil
}

// parseGoal reads goal=pr<=RATE or goal=psi<=RATE (the latter needs a
// tier).
func (d *Damos) parseGoal(kv KeyValue) error {
	m, r, ok := strings.Cut(kv.Value, "<=")
	m, r = strings.TrimSpace(m), strings.TrimSpace(r)
	if !ok || m != "pr" && m != "psi" {
		return keyError("damos", kv, "want goal=pr<=RATE (the window's promotion rate) or goal=psi<=RATE (its modelled memory pressure, with a tier), got %q", kv.Value)
	}
	ppm, err := ParseRate(r)
	if err == nil && ppm == 0 {
		err = fmt.Errorf("a goal of 0 has no score (the kernel divides by it): give a positive rate")
	}
	if err != nil {
		return keyError("damos", kv, "%s", err)
	}
	if m == "psi" {
		if d.PromotionNS <= 0 {
			return keyError("damos", kv, "a psi goal models pressure from the tier's promotion cost: it needs a tier (--tier)")
		}
		if ppm*int64(d.Window/time.Microsecond)/MaxPPM < 1 {
			return keyError("damos", kv, "the goal is under 1 µs of stall per %s window", trace.FormatDuration(d.Window))
		}
	}
	d.GoalMetric, d.GoalPPM = m, ppm
	return nil
}

func (d *Damos) Policy() string { return "damos" }

// Params prints every parameter: "min_age=4,quota=128M/1s[,goal=pr<=1%]".
func (d *Damos) Params() string {
	s := fmt.Sprintf("min_age=%d,quota=%s", d.MinAge, d.QuotaText)
	if d.GoalMetric != "" {
		s += ",goal=" + d.GoalMetric + "<=" + FormatRate(d.GoalPPM)
	}
	return s
}

// NewRun starts a run over windows of h (its page size converts the
// quota's bytes to pages).
func (d *Damos) NewRun(h trace.Header) ControlRun {
	r := &DamosRun{d: d, pageSize: int64(h.PageSize)}
	if r.pageSize <= 0 {
		r.pageSize = 4096
	}
	switch {
	case d.QuotaBytes == 0:
		r.sz = 0
	case d.QuotaPer == 0:
		r.sz = uint64(d.QuotaBytes) * uint64(r.pageSize) // pages per window
	default:
		hi, lo := bits.Mul64(uint64(d.QuotaBytes), uint64(d.Window))
		if hi >= uint64(d.QuotaPer) {
			r.sz = math.MaxUint64
		} else {
			r.sz, _ = bits.Div64(hi, lo, uint64(d.QuotaPer))
		}
	}
	return r
}

// DamosRun is one run of [Damos].
type DamosRun struct {
	d        *Damos
	pageSize int64
	sz       uint64 // the size quota per window in bytes, 0: none
	escBP    uint64 // the feedback loop's esz_bp (bytes x 10,000)
	// Quotas records each window's effective quota in pages (-1: none).
	Quotas []int64
}

// Start is [Nothing]: the scheme's first scan point is the first window's
// end, with the quota set there.
func (r *DamosRun) Start() Online { return Nothing{} }

// EndWindow sets the effective quota from window w's outcome
// (damos_set_effective_quota at the start of a charge window) and returns
// age at min_age under it.
func (r *DamosRun) EndWindow(w *trace.Window, o Outcome) (Online, error) {
	esz := uint64(math.MaxUint64)
	if r.d.GoalMetric == "" {
		esz = r.sz
	} else {
		r.escBP = FeedLoopNextInput(max(r.escBP, 10000), r.score(o))
		esz = r.escBP / 10000
		if r.sz != 0 && r.sz < esz {
			esz = r.sz
		}
	}
	if esz == 0 { // no quota (the kernel's esz 0)
		r.Quotas = append(r.Quotas, -1)
		return AGE{A: r.d.MinAge}, nil
	}
	pages := int64(min(esz/uint64(r.pageSize), math.MaxInt64))
	r.Quotas = append(r.Quotas, pages)
	return Quota{Base: AGE{A: r.d.MinAge}, Pages: pages}, nil
}

// score is damos_quota_score of one goal: current x 10,000 / target, the
// current value the window's promotion rate in whole ppm (pr) or its
// modelled stall in whole microseconds (psi).
func (r *DamosRun) score(o Outcome) uint64 {
	var cur, target uint64
	switch r.d.GoalMetric {
	case "pr":
		if o.Accessed > 0 {
			cur = uint64(o.Promotions) * MaxPPM / uint64(o.Accessed)
		}
		target = uint64(r.d.GoalPPM)
	case "psi":
		cur = uint64(math.Floor(float64(o.Promotions) * r.d.PromotionNS / 1000))
		target = uint64(r.d.GoalPPM) * uint64(r.d.Window/time.Microsecond) / MaxPPM
	}
	hi, lo := bits.Mul64(cur, 10000)
	if hi >= target {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, target)
	return q
}

// FeedLoopNextInput is the kernel's damon_feed_loop_next_input (Linux 6.12
// mm/damon/core.c), in the same unsigned 64-bit arithmetic: the next input
// of a proportional feedback loop whose goal score is 10,000, given the last
// input and the score it made.
func FeedLoopNextInput(last, score uint64) uint64 {
	const goal, minInput = 10000, 10000
	if score == goal {
		return last
	}
	if score >= goal*2 {
		return minInput
	}
	over := score > goal
	var diff uint64
	if over {
		diff = score - goal
	} else {
		diff = goal - score
	}
	var comp uint64
	if last < math.MaxUint64/diff {
		comp = last * diff / goal
	} else {
		comp = last / goal * diff
	}
	if over {
		return max(last-comp, minInput)
	}
	if last < math.MaxUint64-comp {
		return last + comp
	}
	return math.MaxUint64
}

var _ Controller = (*Damos)(nil)
