package fleet

import (
	"math/big"
	"time"

	"mdk/tier"
)

// TierNumbers are one setting's fleet numbers on the plan's tier
// (Config.Tier; docs/tiers.md), on the whole traces.
type TierNumbers struct {
	// NetAvgSavedBytes is AvgSavedBytes net of the tier's own memory for
	// the pages it holds: the memory the fleet really frees. TierBytes is
	// the difference, what the tier keeps; NetSavings is NetAvgSavedBytes
	// over the footprint.
	NetAvgSavedBytes float64 `json:"net_avg_saved_bytes"`
	TierBytes        float64 `json:"tier_bytes"`
	NetSavings       float64 `json:"net_savings"`
	// StallSecondsPerSecond is Σ over jobs of each job's slowdown (stall
	// seconds per second of its windows): the job-seconds the fleet loses
	// to promotions per second. MeanSlowdown is it over the jobs;
	// MaxJobSlowdown is the largest job's, MaxJob that job.
	StallSecondsPerSecond float64 `json:"stall_seconds_per_second"`
	MeanSlowdown          float64 `json:"mean_slowdown"`
	MaxJobSlowdown        float64 `json:"max_job_slowdown"`
	MaxJob                string  `json:"max_job"`
}

// PolicyTier is a policy row's net saved bytes on the tier, on the
// evaluation windows: each job tuned, one setting for all, OPP per job.
type PolicyTier struct {
	TunedNetAvgSavedBytes  float64 `json:"tuned_net_avg_saved_bytes"`
	SingleNetAvgSavedBytes float64 `json:"single_net_avg_saved_bytes"`
	OPPNetAvgSavedBytes    float64 `json:"opp_net_avg_saved_bytes"`
}

// keep is the fraction of a saved page the tier does not keep in memory,
// as an exact rational.
func keep(t *tier.Tier) *big.Rat {
	r := new(big.Rat)
	r.SetFloat64(1 - t.StoredFraction())
	return r
}

// net returns saved bytes (exact) net of the tier's memory, rounded once.
func net(saved *big.Rat, k *big.Rat) float64 {
	if saved == nil {
		return 0
	}
	f, _ := new(big.Rat).Mul(saved, k).Float64()
	return f
}

// tierSetting computes setting i's TierNumbers from the jobs' curves.
func (f *Fleet) tierSetting(t *tier.Tier, window time.Duration, i int, saved *big.Rat, footprint int64) *TierNumbers {
	k := keep(t)
	n := &TierNumbers{NetAvgSavedBytes: net(saved, k), TierBytes: net(saved, new(big.Rat).Sub(big.NewRat(1, 1), k))}
	n.NetSavings = ratio(new(big.Rat).Mul(nilZero(saved), k), new(big.Rat).SetInt64(footprint))
	// Σ_j promotions_j x mean / (W_j x window), exactly.
	mean := new(big.Rat)
	mean.SetFloat64(t.PromotionNs.Mean)
	sum := new(big.Rat)
	jobs := 0
	for _, j := range f.JobResults {
		if j.Error != "" || i >= len(j.Curve) || j.Windows == 0 {
			continue
		}
		jobs++
		s := new(big.Rat).Mul(mean, new(big.Rat).SetInt64(j.Curve[i].Promotions))
		s.Quo(s, new(big.Rat).SetInt64(int64(j.Windows)*window.Nanoseconds()))
		sum.Add(sum, s)
		if x, _ := s.Float64(); x > n.MaxJobSlowdown || n.MaxJob == "" {
			n.MaxJobSlowdown, n.MaxJob = x, j.Job
		}
	}
	n.StallSecondsPerSecond, _ = sum.Float64()
	if jobs > 0 {
		n.MeanSlowdown, _ = sum.Quo(sum, new(big.Rat).SetInt64(int64(jobs))).Float64()
	}
	return n
}

func nilZero(r *big.Rat) *big.Rat {
	if r == nil {
		return new(big.Rat)
	}
	return r
}
