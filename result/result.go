// Package result owns the outcome of one run (one policy setting on one
// trace), the metrics derived from it (SPEC section 1, "Metrics of one run")
// and their machine-readable encodings (SPEC section 6).
//
// Every engine (the reference simulator, the one-pass curve generator)
// produces a [Result] of integers; every float mdk prints is computed from
// those integers here, in one place, so engines that agree on the integers
// agree on every printed digit.
package result

import (
	"math"
	"slices"
)

// Result is one policy setting's run on one trace.
type Result struct {
	Policy string // "age"
	Params string // "A=20"

	Promotions []int64 // promotions_w for every window
	Accessed   []int64 // |A_w| for every window
	Saved      int64   // S: saved page-windows
	Alive      int64   // L: alive page-windows
	PageSize   int64   // bytes

	SavedPerWindow []int64 // pages alive and absent (reclaimed) in each window; sums to Saved
	AlivePerWindow []int64 // pages alive in each window; sums to Alive

	// A run on a sample of the pages (sample.go): SamplePPM is the rate in
	// parts per million (0 when not sampled), every integer above is the
	// sample's times 1/rate, and Groups are this setting's runs on k
	// disjoint random sub-samples, for the error bounds ([Result.Bound]).
	SamplePPM int64
	Groups    []*Result
	// SamplePages is the number of pages in the sample (not scaled), when
	// the run knows it; 0 otherwise.
	SamplePages int64

	// TotalsOnly marks a sub-sample's result (one of Groups) that keeps
	// its totals, not its per-window promotions and saved pages
	// (Promotions and SavedPerWindow are nil; mpc.Options.GroupTotals):
	// enough for every bound that PrintedBound prints. PromotionTotal is
	// then its total promotions; its statistics of per-window promotion
	// rates (MaxPR, Percentile, MeanPR, PR) are NaN, and it cannot be
	// restricted to some windows.
	TotalsOnly     bool
	PromotionTotal int64
}

// Restrict returns the result restricted to windows [from, to): the
// per-window arrays sliced, and S and L summed over those windows only. It is
// how a setting is evaluated on part of a trace while the policy runs on the
// whole of it.
func (r *Result) Restrict(from, to int) *Result {
	if r.TotalsOnly {
		panic("result: Restrict of a result that keeps its totals only (a sub-sample's of mpc.Options.GroupTotals)")
	}
	out := &Result{
		Policy: r.Policy, Params: r.Params, PageSize: r.PageSize,
		Promotions:     r.Promotions[from:to:to],
		Accessed:       r.Accessed[from:to:to],
		SavedPerWindow: r.SavedPerWindow[from:to:to],
		AlivePerWindow: r.AlivePerWindow[from:to:to],
		SamplePPM:      r.SamplePPM,
	}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, g.Restrict(from, to))
	}
	for w := from; w < to; w++ {
		out.Saved += r.SavedPerWindow[w]
		out.Alive += r.AlivePerWindow[w]
	}
	return out
}

// Windows returns W.
func (r *Result) Windows() int { return len(r.Accessed) }

// TotalPromotions returns the sum of promotions over all windows.
func (r *Result) TotalPromotions() int64 {
	if r.TotalsOnly {
		return r.PromotionTotal
	}
	var n int64
	for _, p := range r.Promotions {
		n += p
	}
	return n
}

// PR returns the promotion rate of window w (0 when nothing was accessed).
func (r *Result) PR(w int) float64 {
	if r.TotalsOnly {
		return math.NaN()
	}
	if r.Accessed[w] == 0 {
		return 0
	}
	return float64(r.Promotions[w]) / float64(r.Accessed[w])
}

// Stat names a promotion-rate statistic.
type Stat string

const (
	MaxPR  Stat = "max_pr"
	P99PR  Stat = "p99_pr"
	P98PR  Stat = "p98_pr"
	MeanPR Stat = "mean_pr"
)

// Stats lists the statistics in the order of SPEC section 6.
var Stats = []Stat{MaxPR, P99PR, P98PR, MeanPR}

// ParseStat returns the statistic named s.
func ParseStat(s string) (Stat, bool) {
	for _, st := range Stats {
		if string(st) == s {
			return st, true
		}
	}
	return "", false
}

// Stat returns the named statistic of the per-window promotion rates.
func (r *Result) Stat(s Stat) float64 {
	switch s {
	case MaxPR:
		return r.MaxPR()
	case P99PR:
		return r.Percentile(99)
	case P98PR:
		return r.Percentile(98)
	case MeanPR:
		return r.MeanPR()
	}
	panic("result: unknown statistic " + string(s))
}

// MaxPR returns the largest promotion rate over all windows (0 if W = 0).
func (r *Result) MaxPR() float64 {
	if r.TotalsOnly {
		return math.NaN()
	}
	m := 0.0
	for w := range r.Accessed {
		m = math.Max(m, r.PR(w))
	}
	return m
}

// Percentile returns the nearest-rank q-th percentile (q in 1..100) of the
// promotion rates over all W windows: sorted ascending, index ceil(q*W/100)-1,
// computed in integers so that no rounding moves the rank.
func (r *Result) Percentile(q int) float64 {
	w := len(r.Accessed)
	if r.TotalsOnly {
		return math.NaN()
	}
	if w == 0 {
		return 0
	}
	prs := make([]float64, w)
	for i := range prs {
		prs[i] = r.PR(i)
	}
	slices.Sort(prs)
	rank := (q*w + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return prs[rank-1]
}

// MeanPR returns the mean promotion rate over all W windows (0 if W = 0).
func (r *Result) MeanPR() float64 {
	if r.TotalsOnly {
		return math.NaN()
	}
	if len(r.Accessed) == 0 {
		return 0
	}
	sum := 0.0
	for w := range r.Accessed {
		sum += r.PR(w)
	}
	return sum / float64(len(r.Accessed))
}

// Savings returns S/L (0 when L = 0).
func (r *Result) Savings() float64 {
	if r.Alive == 0 {
		return 0
	}
	return float64(r.Saved) / float64(r.Alive)
}

// AvgSavedBytes returns S * page_size / W (0 when W = 0).
func (r *Result) AvgSavedBytes() float64 {
	if len(r.Accessed) == 0 {
		return 0
	}
	return float64(r.Saved) * float64(r.PageSize) / float64(len(r.Accessed))
}
