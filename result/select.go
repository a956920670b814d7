package result

// Choosing rows: the best setting of a policy at a target, results grouped
// by policy. Every command and package that picks rows (mdk mpc's table,
// the report, tune, a fleet) uses these, so they pick the same ones.

// DefaultTargets are the promotion-rate targets of `mdk mpc`'s table and of
// the report, as fractions (0.005 = 0.5%).
var DefaultTargets = []float64{0.005, 0.01, 0.02, 0.05}

// Best returns the result with the most savings whose statistic st is at or
// below target, or nil if none is. Ties go to the lower statistic, then to
// the earlier result.
func Best(rs []*Result, st Stat, target float64) *Result {
	return BestBy(rs, func(r *Result) float64 { return r.Stat(st) }, target)
}

// BestBy is [Best] with any x of a result in place of a promotion-rate
// statistic (a tier's slowdown, for instance).
func BestBy(rs []*Result, x func(*Result) float64, target float64) *Result {
	var best *Result
	var bestX float64
	for _, r := range rs {
		x := x(r)
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
func Group(rs []*Result) (names []string, groups map[string][]*Result) {
	names, idx := ByPolicy(len(rs), func(i int) string { return rs[i].Policy })
	groups = make(map[string][]*Result, len(names))
	for name, ks := range idx {
		g := make([]*Result, len(ks))
		for j, k := range ks {
			g[j] = rs[k]
		}
		groups[name] = g
	}
	return names, groups
}

// ByPolicy groups the indexes 0..n-1 by the name of their policy,
// policy(i): names in first-seen order, and each name's indexes in order.
// It is the one grouping of settings or results by policy.
func ByPolicy(n int, policy func(i int) string) (names []string, groups map[string][]int) {
	groups = map[string][]int{}
	for i := range n {
		p := policy(i)
		if _, ok := groups[p]; !ok {
			names = append(names, p)
		}
		groups[p] = append(groups[p], i)
	}
	return names, groups
}

// BestIndex is [Best] over the results r(i) of the indexes idx: it returns
// the index of the best one, or -1 if none meets the target.
func BestIndex(idx []int, r func(i int) *Result, st Stat, target float64) int {
	rs := make([]*Result, len(idx))
	for j, i := range idx {
		rs[j] = r(i)
	}
	b := Best(rs, st, target)
	for j, x := range rs {
		if x == b && b != nil {
			return idx[j]
		}
	}
	return -1
}

// Choice is one policy's best setting at one target.
type Choice struct {
	Policy string
	Target float64
	Best   *Result // nil when no setting meets the target
	// Headroom is OPP's savings at the same target minus this setting's
	// savings, as a fraction of alive page-windows (0.05 = 5 points). It is
	// only set (HasHeadroom) when OPP was among the results and met the
	// target.
	Headroom    float64
	HasHeadroom bool
	// HeadroomErr, on a sample, is the error bound of Headroom
	// ([HeadroomBound]); 0 otherwise.
	HeadroomErr float64
}

// HeadroomBound returns the error bound of the headroom opp.Savings() -
// best.Savings() of two sampled runs on the same sample: the random-group
// bound ([GroupBound]) of the k sub-samples' headrooms, opp.Groups[g]'s
// savings minus best.Groups[g]'s, for the two settings chosen on the whole
// sample. The groups are the same pages for both runs, so the bound is of
// the paired difference, not the sum of the two bounds. It is 0 unless both
// runs are sampled at the same rate with the same number of groups (2 or
// more).
func HeadroomBound(opp, best *Result) float64 {
	k := len(best.Groups)
	if !best.Sampled() || !opp.Sampled() || opp.SamplePPM != best.SamplePPM || len(opp.Groups) != k || k < 2 {
		return 0
	}
	vals := make([]float64, k)
	for g := range vals {
		vals[g] = opp.Groups[g].Savings() - best.Groups[g].Savings()
	}
	return GroupBound(best.SamplePPM, vals)
}

// PrintedHeadroomBound returns the bound printed beside c's headroom, and
// whether one is printed: never, under the rule of [Result.PrintedBound].
// On the coverage table of docs/bench.md ("Which bounds are printed") the
// headroom's bound ([HeadroomBound]) covered the exact headroom for 62-64%
// of the policies' best settings at the default targets at 10%, 45-52% at
// 1% and 25-42% at 0.1%: it is the difference of two savings, whose own
// bounds are not printed either, and the settings chosen on the sample
// need not be the exact run's.
func (c Choice) PrintedHeadroomBound() (float64, bool) { return 0, false }

// Choose returns, for every policy in rs and every target, its best setting
// and its headroom against OPP.
func Choose(rs []*Result, st Stat, targets []float64) []Choice {
	return ChooseBy(rs, func(r *Result) float64 { return r.Stat(st) }, targets)
}

// ChooseBy is [Choose] with any x of a result in place of a statistic. x
// must be a function of the result alone: it is computed once a result,
// not once a target.
func ChooseBy(rs []*Result, x func(*Result) float64, targets []float64) []Choice {
	xs := make(map[*Result]float64, len(rs))
	for _, r := range rs {
		if _, ok := xs[r]; !ok {
			xs[r] = x(r)
		}
	}
	x = func(r *Result) float64 { return xs[r] }
	names, groups := Group(rs)
	var out []Choice
	for _, name := range names {
		for _, t := range targets {
			c := Choice{Policy: name, Target: t, Best: BestBy(groups[name], x, t)}
			if o := BestBy(groups["opp"], x, t); o != nil && c.Best != nil {
				c.Headroom = o.Savings() - c.Best.Savings()
				c.HasHeadroom = true
				c.HeadroomErr = HeadroomBound(o, c.Best)
			}
			out = append(out, c)
		}
	}
	return out
}
