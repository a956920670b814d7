package mpc

import (
	"math"

	"mdk/policy"
	"mdk/trace"
)

// oneParam is the generic engine of every policy.OneParam family (age,
// vmin, lopp, ...). A gap with critical value c is reclaimed by the settings
// x <= c, i.e. the first countLE(c) values of the axis; it is added at that
// count, and suffix sums over the axis give each setting's totals.
type oneParam struct {
	ps    []policy.OneParam
	axis  *floatAxis
	n     int // axis length
	a     *acc
	delay bool
	feat  bool
	// cache memoizes the critical value by feature vector for policies
	// whose critical value depends on the features alone (L-OPP: one model
	// evaluation per distinct vector instead of one per gap).
	cache map[[6]int32]float64

	// Fast path for families whose critical value is idle+off, a whole
	// number (age: g, vmin: g-1): no interface call, no float.
	idle  bool
	off   int
	iaxis *intAxis
}

// maxCache bounds the critical-value cache (about 50 bytes an entry).
const maxCache = 1 << 20

func newOneParam(ps []policy.OneParam) *oneParam {
	xs := make([]float64, len(ps))
	for i, p := range ps {
		xs[i] = p.Param()
	}
	e := &oneParam{ps: ps, axis: newFloatAxis(xs), delay: ps[0].DelayIsParam(), feat: ps[0].UsesFeatures()}
	e.n = len(e.axis.vals)
	e.a = newAcc(e.n + 1)
	if f, ok := ps[0].(policy.FeaturesOnly); ok && f.FeaturesOnly() {
		e.cache = map[[6]int32]float64{}
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
			ints[i] = int(x)
		}
		e.iaxis = newIntAxis(ints)
	}
	return e
}

func (e *oneParam) needsFeatures() bool { return e.feat }
func (e *oneParam) needsGaps() bool     { return !e.idle }

// group adds histogram entries (the fast path of age and vmin).
func (e *oneParam) group(end int, closed bool, es []histEntry) {
	for _, x := range es {
		if k := e.iaxis.countLE(int(x.Idle) + e.off); k > 0 {
			e.a.addN(k, x, end, closed)
		}
	}
}
func (e *oneParam) newWindow(w int)      { e.a.newWindow(w) }
func (e *oneParam) endWindow(int, int64) {}

func (e *oneParam) gaps(gs []packedGap, fs [][6]int32) {
	var f [6]int
	p := e.ps[0]
	for i, g := range gs {
		if e.feat {
			for j, v := range fs[i] {
				f[j] = int(v)
			}
		}
		var c float64
		if e.cache != nil {
			var ok bool
			if c, ok = e.cache[fs[i]]; !ok {
				c = p.Critical(g.unpack(), &f)
				if len(e.cache) < maxCache {
					e.cache[fs[i]] = c
				}
			}
		} else {
			c = p.Critical(g.unpack(), &f)
		}
		if k := e.axis.countLE(c); k > 0 {
			e.a.add(k, g)
		}
	}
}

func (e *oneParam) finish(W int) ([]int64, [][]int64, [][]int64) {
	// Suffix sums: the setting at axis index s reclaims the gaps added at
	// k > s.
	suffix := func(row []int64) []int64 { return suffix1(row, e.n) }
	proms, plus, minus, cnt, sum := e.a.mapped(W, suffix)
	saved := make([]int64, len(e.ps))
	out := make([][]int64, len(e.ps))
	perWin := make([][]int64, len(e.ps))
	for i, p := range e.ps {
		a := e.axis.index(p.Param())
		saved[i] = sum[a]
		shift := 0
		if e.delay {
			saved[i] -= int64(p.Param()) * cnt[a]
			shift = int(p.Param())
		}
		out[i] = column(proms, a)
		perWin[i] = savedWindows(W, plus, minus, a, shift)
	}
	return saved, out, perWin
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
