package fleet

import (
	"cmp"
	"math/big"
	"slices"

	"mdk/result"
	"mdk/tier"
	"mdk/trace"
)

// Fleet is the fleet view (docs/fleet.md). Fractions are computed from the
// exact sums of the accumulators and rounded once, to the nearest float64.
type Fleet struct {
	SLO    string `json:"slo"` // "" when none
	Window string `json:"window"`
	// Jobs counts every job, Failed those that failed (their errors are in
	// the per-job table); the sums are over the others.
	Jobs             int   `json:"jobs"`
	Failed           int   `json:"failed"`
	FootprintBytes   int64 `json:"footprint_bytes"`
	AlivePageWindows int64 `json:"alive_page_windows"`
	AccessRecords    int64 `json:"access_records"`

	// Tier is the plan's tier, if any (its figures and their source).
	Tier *tier.Tier `json:"tier,omitempty"`

	Settings []SettingRow `json:"settings"`
	Policies []PolicyRow  `json:"policies"` // with an SLO only

	// JobResults are the jobs, sorted by name (then error).
	JobResults []JobResult `json:"-"`
}

// Fleet numbers of one strategy on one part.
type Numbers struct {
	Jobs int64 `json:"jobs"`
	// AvgSavedBytes is Σ over jobs of S x page_size / W: the memory the
	// fleet frees on average.
	AvgSavedBytes float64 `json:"avg_saved_bytes"`
	// Savings is AvgSavedBytes over the fleet's footprint (Σ peak alive
	// bytes); AliveSavings is over Σ average alive bytes instead.
	Savings      float64 `json:"savings"`
	AliveSavings float64 `json:"alive_savings"`
	// BreakingJobs counts the jobs whose statistic breaks the SLO;
	// BreakingShare is BreakingJobs / Jobs.
	BreakingJobs  int64   `json:"breaking_jobs"`
	BreakingShare float64 `json:"breaking_share"`
	// Err, on sampled jobs (the settings' rows), are the error bounds of
	// AvgSavedBytes, Savings and AliveSavings: result.GroupBound of the same
	// fleet sums over each sub-sample.
	Err *NumbersErr `json:"err,omitempty"`
}

// NumbersErr are the error bounds of a Numbers' estimates that are printed,
// nil (null in JSON, empty in CSV) where none is. Under the rule of
// docs/bench.md ("Which bounds are printed") the savings, ratios of the
// sample's own, get none; the average saved bytes, a sum of counts, get
// theirs unless every sub-sample gave the same (a bound of 0).
type NumbersErr struct {
	AvgSavedBytes *float64 `json:"avg_saved_bytes"`
	Savings       *float64 `json:"savings"`
	AliveSavings  *float64 `json:"alive_savings"`
}

// SettingRow is one setting applied to every job, on the whole traces, or
// one controller run on every job.
type SettingRow struct {
	Policy           string `json:"policy"`
	Params           string `json:"params"`
	SavedPageWindows int64  `json:"saved_page_windows"`
	Numbers
	// Train and Eval are the same setting on the training and evaluation
	// windows (with an SLO).
	Train *Numbers `json:"train,omitempty"`
	Eval  *Numbers `json:"eval,omitempty"`
	// Tier is the setting on the plan's tier, whole traces (with a tier).
	Tier *TierNumbers `json:"tier,omitempty"`
	// Controller marks a controller's row (Plan.Controllers: each job ran
	// it over its own trace, these are the sums of its realised points);
	// Switches sums its switches over the jobs.
	Controller bool  `json:"controller,omitempty"`
	Switches   int64 `json:"switches,omitempty"`
}

// PolicyRow compares, on the evaluation windows, three ways to run one
// policy over the fleet at the SLO.
type PolicyRow struct {
	Policy string `json:"policy"`
	// Tuned: each job its own setting, chosen on its training windows
	// (tune's rules). TunedFound jobs had a setting meeting the SLO there;
	// the others count as saving nothing.
	Tuned      Numbers `json:"tuned"`
	TunedFound int64   `json:"tuned_found"`
	// Single: one setting for every job, chosen on the training windows:
	// the fewest jobs breaking the SLO, then the most fleet savings, then
	// the first in grid order. "" when there are no jobs.
	SingleParams        string  `json:"single_params"`
	SingleTrainBreaking int64   `json:"single_train_breaking_jobs"`
	Single              Numbers `json:"single"`
	// OPP: each job with OPP's best setting at the SLO chosen on its
	// evaluation windows (tune's yardstick): the headroom.
	OPP            Numbers `json:"opp"`
	HeadroomTuned  float64 `json:"headroom_tuned"`  // OPP.Savings - Tuned.Savings
	HeadroomSingle float64 `json:"headroom_single"` // OPP.Savings - Single.Savings
	// Tier is the three strategies' net saved bytes (with a tier).
	Tier *PolicyTier `json:"tier,omitempty"`
}

func ratio(a *big.Rat, b *big.Rat) float64 {
	if a == nil || b == nil || b.Sign() == 0 {
		return 0
	}
	f, _ := new(big.Rat).Quo(a, b).Float64()
	return f
}

func numbers(jobs, footprint int64, p Part) Numbers {
	n := Numbers{Jobs: jobs, BreakingJobs: p.Breaking}
	if p.SavedBytes != nil {
		n.AvgSavedBytes, _ = p.SavedBytes.Float64()
	}
	n.Savings = ratio(p.SavedBytes, new(big.Rat).SetInt64(footprint))
	n.AliveSavings = ratio(p.SavedBytes, p.AliveBytes)
	if jobs > 0 {
		n.BreakingShare = float64(p.Breaking) / float64(jobs)
	}
	return n
}

// sampledNumbers is numbers with the error bounds of a sampled key's part,
// policy's setting's.
func sampledNumbers(policy string, a Acc, p Part) Numbers {
	n := numbers(a.Jobs, a.FootprintBytes, p)
	k := len(p.Groups)
	if a.SampleMixed || a.SamplePPM <= 0 || k < 2 {
		return n
	}
	n.Err = &NumbersErr{}
	if !FleetBounded(policy) {
		return n
	}
	avg := make([]float64, k)
	for g, gs := range p.Groups {
		avg[g], _ = gs.SavedBytes.Float64()
	}
	if b := result.GroupBound(a.SamplePPM, avg); b > 0 {
		n.Err.AvgSavedBytes = &b
	}
	return n
}

// FleetBounded reports whether a policy's fleet average saved bytes are
// printed with their bound on sampled jobs: not OPP's, whose sub-samples
// take budgets of their own, so that their spread is not its estimate's
// error (its bound covered the exact value for 70-87% of the settings at
// 0.1%, and 85% on the training windows at 1%: docs/bench.md, "The
// fleet's own coverage").
func FleetBounded(policy string) bool { return policy != "opp" }

// Build makes the fleet view from the merged accumulators (one per key, any
// order) and every job's result (any order).
func (p *Plan) Build(accs []Acc, jobs []JobResult) *Fleet {
	byKey := map[string]Acc{}
	for _, a := range accs {
		if b, ok := byKey[a.Key]; ok {
			a = b.Merge(a)
		}
		byKey[a.Key] = a
	}
	f := &Fleet{SLO: p.Config.SLO, Window: trace.FormatDuration(p.Config.Window), Jobs: len(jobs), Tier: p.Config.Tier}
	f.JobResults = slices.Clone(jobs)
	slices.SortStableFunc(f.JobResults, func(a, b JobResult) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Error, b.Error))
	})
	for i := range f.JobResults {
		j := &f.JobResults[i]
		if j.Error != "" {
			f.Failed++
			continue
		}
		f.FootprintBytes += j.FootprintBytes()
		f.AlivePageWindows += j.AlivePageWindows
		f.AccessRecords += j.AccessRecords
	}
	for i := range len(p.Settings) + len(p.Controllers) {
		a := byKey[SettingKey(i)]
		row := SettingRow{SavedPageWindows: a.Whole.SavedPageWindows}
		if i < len(p.Settings) {
			row.Policy, row.Params = p.Settings[i].Policy(), p.Settings[i].Params()
		} else {
			c := p.Controllers[i-len(p.Settings)]
			row.Policy, row.Params, row.Controller, row.Switches = c.Policy(), c.Params(), true, a.Switches
		}
		row.Numbers = sampledNumbers(row.Policy, a, a.Whole)
		if p.SLO != nil {
			t, e := sampledNumbers(row.Policy, a, a.Train), sampledNumbers(row.Policy, a, a.Eval)
			row.Train, row.Eval = &t, &e
		}
		if f.Tier != nil {
			row.Tier = f.tierSetting(f.Tier, p.Config.Window, i, a.Whole.SavedBytes, a.FootprintBytes)
		}
		f.Settings = append(f.Settings, row)
	}
	if p.SLO == nil {
		return f
	}
	o := byKey[OPPKey]
	opp := numbers(o.Jobs, o.FootprintBytes, o.Eval)
	var k *big.Rat
	if f.Tier != nil {
		k = keep(f.Tier)
	}
	for pi, name := range p.Names {
		t := byKey[TunedKey(pi)]
		row := PolicyRow{Policy: name, Tuned: numbers(t.Jobs, t.FootprintBytes, t.Eval), TunedFound: t.Found, OPP: opp}
		// The single setting: fewest breaking jobs on the training
		// windows, then most saved bytes there (compared exactly), then
		// the first.
		best := -1
		for _, k := range p.Groups[name] {
			a := byKey[SettingKey(k)]
			if a.Jobs == 0 {
				continue
			}
			if best < 0 {
				best = k
				continue
			}
			b := byKey[SettingKey(best)]
			if a.Train.Breaking < b.Train.Breaking ||
				a.Train.Breaking == b.Train.Breaking && ratCmp(a.Train.SavedBytes, b.Train.SavedBytes) > 0 {
				best = k
			}
		}
		var singleSaved *big.Rat
		if best >= 0 {
			a := byKey[SettingKey(best)]
			row.SingleParams = p.Settings[best].Params()
			row.SingleTrainBreaking = a.Train.Breaking
			row.Single = sampledNumbers(name, a, a.Eval)
			singleSaved = a.Eval.SavedBytes
		}
		if k != nil {
			row.Tier = &PolicyTier{TunedNetAvgSavedBytes: net(t.Eval.SavedBytes, k),
				SingleNetAvgSavedBytes: net(singleSaved, k), OPPNetAvgSavedBytes: net(o.Eval.SavedBytes, k)}
		}
		row.HeadroomTuned = opp.Savings - row.Tuned.Savings
		row.HeadroomSingle = opp.Savings - row.Single.Savings
		f.Policies = append(f.Policies, row)
	}
	return f
}

func ratCmp(a, b *big.Rat) int {
	z := new(big.Rat)
	if a == nil {
		a = z
	}
	if b == nil {
		b = z
	}
	return a.Cmp(b)
}
