package policy

import "time"

// Default grids: what a bare policy name (`mdk mpc TRACE age`) sweeps. They
// depend only on the window length and are computed with integers alone, so
// they are the same on every machine.
//
// The count ladder, used by age, vmin, paw and pace: M is 2 hours in windows,
// rounded up, but at least 49 (so long windows still give ~50 points and the
// ladder then reaches past 2 hours). With s steps per octave (s a power of
// two), the ladder is 0, 1, ..., s-1, then, for each power of two 2^k >= s,
// the values 2^k + i*2^k/s for i = 0..s-1, up to M, and M itself last. Steps
// grow with the value: dense at short ages, sparse at long ones. s is the
// power of two from 1 to 64 whose ladder has a size closest to 50 (the
// smaller s on a tie). With 30 s windows (M = 240) s = 8 and the ladder has
// 48 values:
//
//	0..8 step 1, 8..16 step 1, 16..32 step 2, 32..64 step 4, 64..128 step 8,
//	128..240 step 16
//
// With 1 s windows (M = 7200) s = 4: 49 values, 0 1 2 3 4 5 6 7 8 10 12 14
// 16 20 ... 5120 6144 7168 7200. With 10 s windows (M = 720) s = 8: 61
// values. With 1 minute windows (M = 120) s = 8: 40 values. With windows of
// 147 s or more (M = 49) every integer 0..49.
//
// The grids. Each ends with a setting that meets any SLO (it never costs a
// promotion), so that "no setting meets the SLO" means the SLO cannot be
// met, not that the grid stops short:
//
//   - age: A over the ladder, then inf (never reclaims).
//   - vmin: T over the ladder, then inf (never reclaims).
//   - opp: r over 49 fixed rates from 0 to 20%, whatever the window, dense
//     at small rates: 0, 0.01%, 0.02%, 0.05%, 0.1%, 0.15%, 0.2%, 0.25%,
//     0.3%, 0.4%, then 0.5% to 2% by 0.1%, 2.25% to 3% by 0.25%, 3.5% to 5%
//     by 0.5%, 6% to 20% by 1% (see oppRates). It includes 0.5%, 1%, 2%
//     and 5%. r = 0 reclaims only open gaps, which cost no promotion.
//   - paw: P over 9 values picked evenly (by position) from the ladder,
//     wait over the whole ladder, P the outer loop; then P = inf, wait =
//     [DefaultWait] (never reclaims). 9 x 48 + 1 = 433 settings with 30 s
//     windows. P = 0 reclaims every gap (d >= 1 always), so the P = 0 row
//     is age over its own grid: paw's best setting is never worse than
//     age's. (The grid once fixed wait at DefaultWait; with 30 s windows
//     that is 2, and paw then met max_pr <= 2% on no generated trace
//     except by never reclaiming.)
//   - pace: P over the same 9 values, then inf, A over the whole ladder, P
//     the outer loop; then P = inf, A = inf (never reclaims): 10 x 48 + 1 =
//     481 settings with 30 s windows. The P = inf row is age over its own
//     grid. (The grid once took A over 10 values only, and its best
//     setting lost to age's on churn, mix and phases.)
//   - lopp: theta from 0 to 1 by 0.02. theta = 1 reclaims only touches the
//     model scores exactly 1 (a margin above about 37), in practice none.
//
// The wide grids ([WideGrid]) are for an axis or an SLO that is not a
// promotion rate (a tier's slowdown). There the other policies' grids reach
// far beyond a 20% promotion rate (age:A=0 reclaims every gap), and opp's
// default grid, which stops at r = 20%, would make OPP's best a setting any
// aggressive policy beats. So opp's wide grid is its default grid followed
// by 25% to 100% by 5% (65 settings): r = 100% reclaims every gap with
// g >= 1 (every closed gap ending in a window is one of its accesses), the
// most any policy saves. Every other policy's wide grid is its default grid.

// DefaultPolicies are the policies run when no spec is given (mdk mpc, mdk
// tune, mdk report, a fleet), each over its default grid. lopp is not among
// them: it needs a trained model, and callers that have one add it.
var DefaultPolicies = []string{"age", "vmin", "opp", "paw", "pace"}

// maxCountWindow is the longest age, wait or distance the count ladder reaches.
const maxCountWindow = 2 * time.Hour

// DefaultGrid returns the default grid of the policy called name for a trace
// whose windows last window, or nil if there is no such policy.
func DefaultGrid(name string, window time.Duration) []Setting {
	d, ok := Lookup(name)
	if !ok || window <= 0 {
		return nil
	}
	return d.Grid(window)
}

// countLadder returns the count ladder for a window length (see above).
func countLadder(window time.Duration) []int {
	m := int((maxCountWindow + window - 1) / window)
	if m < 49 {
		m = 49
	}
	best := ladder(m, 1)
	for s := 2; s <= 64; s *= 2 {
		if l := ladder(m, s); dist50(len(l)) < dist50(len(best)) {
			best = l
		}
	}
	return best
}

func dist50(n int) int {
	if n < 50 {
		return 50 - n
	}
	return n - 50
}

// ladder returns 0..s-1, then s steps per octave, up to m, then m.
func ladder(m, s int) []int {
	var out []int
	for v := 0; v < s && v <= m; v++ {
		out = append(out, v)
	}
	for p := s; p <= m; p *= 2 {
		step := p / s
		for v := p; v < 2*p && v <= m; v += step {
			out = append(out, v)
		}
	}
	if out[len(out)-1] != m {
		out = append(out, m)
	}
	return out
}

// pick returns k values of vals at evenly spaced positions, first and last
// included (all of vals if it has k or fewer).
func pick(vals []int, k int) []int {
	if len(vals) <= k {
		return vals
	}
	out := make([]int, k)
	for i := range out {
		out[i] = vals[i*(len(vals)-1)/(k-1)]
	}
	return out
}

// WideGrid returns the wide grid of the policy called name (see above):
// opp's default grid continued to r = 100%, every other policy's default
// grid; nil if there is no such policy.
func WideGrid(name string, window time.Duration) []Setting {
	out := DefaultGrid(name, window)
	if name == "opp" && out != nil {
		for r := int64(250000); r <= MaxPPM; r += 50000 {
			out = append(out, OPP{PPM: r})
		}
	}
	return out
}

// oppRates are opp's default targets, in ppm.
var oppRates = func() []int64 {
	out := []int64{0, 100, 200, 500, 1000, 1500, 2000, 2500, 3000, 4000}
	add := func(from, to, step int64) {
		for r := from; r <= to; r += step {
			out = append(out, r)
		}
	}
	add(5000, 20000, 1000)    // 0.5% .. 2% by 0.1%
	add(22500, 30000, 2500)   // 2.25% .. 3% by 0.25%
	add(35000, 50000, 5000)   // 3.5% .. 5% by 0.5%
	add(60000, 200000, 10000) // 6% .. 20% by 1%
	return out
}()

func ageGrid(window time.Duration) []Setting {
	var out []Setting
	for _, a := range countLadder(window) {
		out = append(out, AGE{A: a})
	}
	return append(out, AGE{A: Inf})
}

func vminGrid(window time.Duration) []Setting {
	var out []Setting
	for _, t := range countLadder(window) {
		out = append(out, VMIN{T: t})
	}
	return append(out, VMIN{T: Inf})
}

func oppGrid(time.Duration) []Setting {
	var out []Setting
	for _, r := range oppRates {
		out = append(out, OPP{PPM: r})
	}
	return out
}

func pawGrid(window time.Duration) []Setting {
	l := countLadder(window)
	var out []Setting
	for _, p := range pick(l, 9) {
		for _, w := range l {
			out = append(out, PAW{P: p, Wait: w})
		}
	}
	return append(out, PAW{P: Inf, Wait: DefaultWait(window)})
}

func paceGrid(window time.Duration) []Setting {
	l := countLadder(window)
	ps := append(append([]int(nil), pick(l, 9)...), Inf)
	var out []Setting
	for _, p := range ps {
		for _, a := range l {
			out = append(out, PACE{P: p, A: a})
		}
	}
	return append(out, PACE{P: Inf, A: Inf})
}

// loppGrid sweeps theta from 0 to 1 in steps of 0.02 (51 settings); the
// settings have no model until [AttachModel].
func loppGrid(time.Duration) []Setting {
	out := make([]Setting, 0, 51)
	for i := 0; i <= 50; i++ {
		out = append(out, LOPP{Theta: float64(i) / 50})
	}
	return out
}
