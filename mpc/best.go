package mpc

import (
	"mdk/result"
)

// DefaultTargets are the promotion-rate targets of `mdk mpc`'s table.
var DefaultTargets = []float64{0.005, 0.01, 0.02, 0.05}

// Best returns the result with the most savings whose statistic st is at or
// below target, or nil if none is. Ties go to the lower statistic, then to
// the earlier result.
func Best(rs []*result.Result, st result.Stat, target float64) *result.Result {
	var best *result.Result
	var bestX float64
	for _, r := range rs {
		x := r.Stat(st)
		if x > target {
			continue
		}
		if best == nil || r.Savings() > best.Savings() || (r.Savings() == best.Savings() && x < bestX) {
			best, bestX = r, x
		}
	}
	return best
}

// Group splits results by policy name, keeping the first-seen order of the
// policies and the order of the results within each.
func Group(rs []*result.Result) (names []string, groups map[string][]*result.Result) {
	groups = map[string][]*result.Result{}
	for _, r := range rs {
		if _, ok := groups[r.Policy]; !ok {
			names = append(names, r.Policy)
		}
		groups[r.Policy] = append(groups[r.Policy], r)
	}
	return names, groups
}

// Choice is one policy's best setting at one target.
type Choice struct {
	Policy string
	Target float64
	Best   *result.Result // nil when no setting meets the target
	// Headroom is OPP's savings at the same target minus this setting's
	// savings, as a fraction of alive page-windows (0.05 = 5 points). It is
	// only set (HasHeadroom) when OPP was among the results and met the
	// target.
	Headroom    float64
	HasHeadroom bool
}

// Choose returns, for every policy in rs and every target, its best setting
// and its headroom against OPP.
func Choose(rs []*result.Result, st result.Stat, targets []float64) []Choice {
	names, groups := Group(rs)
	var out []Choice
	for _, name := range names {
		for _, t := range targets {
			c := Choice{Policy: name, Target: t, Best: Best(groups[name], st, t)}
			if o := Best(groups["opp"], st, t); o != nil && c.Best != nil {
				c.Headroom = o.Savings() - c.Best.Savings()
				c.HasHeadroom = true
			}
			out = append(out, c)
		}
	}
	return out
}
