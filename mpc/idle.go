package mpc

import (
	"mdk/policy"
)

// idle is the engine of idle-time L-OPP settings (policy.LOPPIdle,
// docs/lopp.md "Idle time"). A gap starting at touch i with idle length g
// is scored at every age a = 0..min(g, 64) (its touch's features and a);
// with m_a the running maximum of those scores, setting theta reclaims it
// at the end of window i+a*(theta), a* the first age with m_a >= theta, if
// there is one, saving g-a*. As theta grows a* does not shrink: the
// thetas <= m_0 are reclaimed at age 0, those in (m_0, m_1] at age 1, and so
// on, each a contiguous range of the sorted theta axis. The gap adds +1 to
// the start row i+a+1 of each range (in suffix form: +1 at its upper end,
// -1 at its lower) and its end (promotion or open end) once, at the
// number of thetas <= m_G; suffix sums give each setting's counts.
type idle struct {
	ps    []policy.LOPPIdle
	axis  *floatAxis
	a     *acc
	cache map[idleKey]float64
}

type idleKey struct {
	f   policy.Features
	age int32
}

func newIdle(ps []policy.LOPPIdle) *idle {
	xs := make([]float64, len(ps))
	for i, p := range ps {
		xs[i] = p.Theta
	}
	e := &idle{ps: ps, axis: newFloatAxis(xs), cache: map[idleKey]float64{}}
	e.a = newAcc(len(e.axis.vals) + 1)
	return e
}

func (e *idle) needsGaps() bool                    { return true }
func (e *idle) needsFeatures() bool                { return true }
func (e *idle) group(int, bool, []histEntry)       {}
func (e *idle) newWindow(w int)                    { e.a.newWindow(w) }
func (e *idle) reserve(windows int, budget *int64) { e.a.reserve(windows, budget) }
func (e *idle) endWindow(int, int64)               {}

func (e *idle) score(f *policy.Features, age int) float64 {
	k := idleKey{*f, int32(age)}
	s, ok := e.cache[k]
	if !ok {
		s = e.ps[0].Score(f, age)
		if len(e.cache) < maxCache {
			e.cache[k] = s
		}
	}
	return s
}

func (e *idle) gaps(gs []packedGap, fs []policy.Features, _ []int32) {
	w := e.a.width
	for i, g := range gs {
		G := min(int(g.idle), policy.MaxIdleFeature)
		prev := 0 // thetas reclaiming at an earlier age
		m := -1.0
		for age := 0; age <= G; age++ {
			m = max(m, e.score(&fs[i], age))
			c := e.axis.countLE(m)
			if c > prev {
				row := (int(g.start) + age + 1) * w
				e.a.plus.data[row+c]++
				e.a.plus.data[row+prev]--
				prev = c
			}
			if prev == len(e.axis.vals) {
				break
			}
		}
		if prev == 0 {
			continue
		}
		end := int(g.start+g.idle+1)*w + prev
		if g.closed {
			e.a.prom.data[end]++
		} else {
			e.a.oend.data[end]++
		}
	}
}

func (e *idle) finish(W int) ([]int64, [][]int64, [][]int64) {
	s := e.a.mapped(W, suffix)
	saved := make([]int64, len(e.ps))
	cols := make([]int, len(e.ps))
	for i, p := range e.ps {
		cols[i] = e.axis.index(p.Theta)
		saved[i] = s.sum[cols[i]]
	}
	out, perWin := newRows(len(e.ps), W), newRows(len(e.ps), W)
	s.perWindow(W, cols, nil, out, perWin)
	return saved, out, perWin
}
