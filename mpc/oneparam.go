package mpc

import (
	"math"

	"mdk/policy"
	"mdk/trace"
)

// oneParam is the generic engine of every one-parameter family: a
// policy.OneParam (age, vmin, a plug-in policy) or a policy.FeatureParam
// (lopp). A gap with critical value c is reclaimed by the settings x <= c,
// i.e. the first countLE(c) values of the axis; it is added at that count,
// and suffix sums over the axis give each setting's totals.
type oneParam struct {
	ps    []policy.Ordered
	axis  *floatAxis
	n     int // axis length
	a     *acc
	delay bool
	// critical is the family's critical value of a gap (a OneParam), or
	// nil for a FeatureParam, whose critical value, ofFeatures, is cached
	// by feature vector (L-OPP: one model evaluation per distinct vector
	// instead of one per gap).
	critical   func(trace.Gap) float64
	ofFeatures func(*policy.Features) float64
	cache      map[policy.Features]float64

	// Fast path for families whose critical value is idle+off, a whole
	// number (age: g, vmin: g-1): no interface call, no float.
	idle  bool
	off   int
	iaxis *intAxis
}

// maxCache bounds the critical-value cache (about 50 bytes an entry).
const maxCache = 1 << 20

// newOneParam returns the engine of settings of one family: each a
// policy.OneParam, or each a policy.FeatureParam.
func newOneParam(ps []policy.Ordered) *oneParam {
	xs := make([]float64, len(ps))
	for i, p := range ps {
		xs[i] = p.Param()
	}
	e := &oneParam{ps: ps, axis: newFloatAxis(xs), delay: ps[0].DelayIsParam()}
	e.n = len(e.axis.vals)
	e.a = newAcc(e.n + 1)
	switch p := ps[0].(type) {
	case policy.FeatureParam:
		e.ofFeatures = p.CriticalOf
		e.cache = map[policy.Features]float64{}
	case policy.OneParam:
		e.critical = p.Critical
	}
	switch ps[0].(type) {
	case policy.AGE:
		e.idle, e.off = true, 0
	case policy.VMIN:
		e.idle, e.off = true, -1
	}
	if e.idle {
		ints := make([]int, len(e.axis.vals))
		for i, x := range e.axis.vals {
			ints[i] = countOf(x)
		}
		e.iaxis = newIntAxis(ints)
	}
	return e
}

func (e *oneParam) needsFeatures() bool { return e.ofFeatures != nil }
func (e *oneParam) needsGaps() bool     { return !e.idle }

// group adds histogram entries (the fast path of age and vmin).
func (e *oneParam) group(end int, closed bool, es []histEntry) {
	for _, x := range es {
		if k := e.iaxis.countLE(int(x.Idle) + e.off); k > 0 {
			e.a.addN(k, x, end, closed)
		}
	}
}
func (e *oneParam) newWindow(w int)                    { e.a.newWindow(w) }
func (e *oneParam) reserve(windows int, budget *int64) { e.a.reserve(windows, budget) }
func (e *oneParam) endWindow(int, int64)               {}

func (e *oneParam) gaps(gs []packedGap, fs []policy.Features, _ []int32) {
	for i, g := range gs {
		var c float64
		if e.critical != nil {
			c = e.critical(g.unpack())
		} else {
			var ok bool
			if c, ok = e.cache[fs[i]]; !ok {
				c = e.ofFeatures(&fs[i])
				if len(e.cache) < maxCache {
					e.cache[fs[i]] = c
				}
			}
		}
		if k := e.axis.countLE(c); k > 0 {
			e.a.add(k, g)
		}
	}
}

func (e *oneParam) finish(W int) ([]int64, [][]int64, [][]int64) {
	s := e.a.mapped(W, suffix)
	saved, cols, shifts := e.settle(s)
	out, perWin := newRows(len(e.ps), W), newRows(len(e.ps), W)
	s.perWindow(W, cols, shifts, out, perWin)
	return saved, out, perWin
}

func (e *oneParam) flatten() { e.a.flatten() }

func (e *oneParam) finishTotals() ([]int64, []int64) {
	s := e.a.mapped(0, suffix)
	saved, cols, _ := e.settle(s)
	return saved, s.totalProms(cols, nil)
}

// settle returns each setting's saved page-windows from the acc's suffix
// sums, and its column and delay.
func (e *oneParam) settle(s sums) (saved []int64, cols, shifts []int) {
	// Suffix sums: the setting at axis index s reclaims the gaps added at
	// k > s.
	saved = make([]int64, len(e.ps))
	cols, shifts = make([]int, len(e.ps)), make([]int, len(e.ps))
	for i, p := range e.ps {
		a := e.axis.index(p.Param())
		saved[i] = s.sum[a]
		if e.delay {
			// x = inf (age:A=inf) reclaims nothing: cnt[a] is 0.
			x := countOf(p.Param())
			saved[i] -= int64(x) * s.cnt[a]
			shifts[i] = x
		}
		cols[i] = a
	}
	return saved, cols, shifts
}

// countOf returns a whole-number parameter as an int: trace.Inf for inf
// (float64(trace.Inf) and above, which an int cannot hold).
func countOf(x float64) int {
	if x >= float64(trace.Inf) {
		return trace.Inf
	}
	return int(x)
}

// unpack returns the gap as a trace.Gap (without its page).
func (g packedGap) unpack() trace.Gap {
	prior := int(g.prior)
	if g.prior < 0 {
		prior = trace.Inf
	}
	return trace.Gap{Start: int(g.start), Idle: int(g.idle), Closed: g.closed, Prior: prior}
}

// priorOf returns the gap's prior reuse distance, trace.Inf if infinite.
func priorOf(g packedGap) int {
	if g.prior < 0 {
		return math.MaxInt
	}
	return int(g.prior)
}
