package calibrate

import (
	"slices"

	"mdk/tier"
)

// latency summarises wall-time samples in nanoseconds: nearest-rank p50 and
// p99 (sorted ascending, index ceil(q*n/100)-1, as result.Percentile), max,
// and their mean as both Mean and MeanWall (the caller replaces Mean by a
// CPU-time mean where it has one). It sorts ns.
func latency(ns []int64) tier.Latency {
	if len(ns) == 0 {
		return tier.Latency{}
	}
	slices.Sort(ns)
	var sum float64
	for _, x := range ns {
		sum += float64(x)
	}
	rank := func(q int) float64 {
		k := (q*len(ns) + 99) / 100
		return float64(ns[max(k, 1)-1])
	}
	mean := sum / float64(len(ns))
	return tier.Latency{Samples: int64(len(ns)), Mean: mean, MeanWall: mean, P50: rank(50), P99: rank(99), Max: float64(ns[len(ns)-1])}
}
