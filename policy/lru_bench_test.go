package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRankLRU is a capacity's per-window cost (lru, senpai's limit):
// ranking all of a job's resident pages, as the simulator and the agent do
// at every scan point (RankLRU on every candidate), here with half of them
// reclaimed. The pages' last touches are spread over 240 windows (a 2-hour
// trace of 30 s windows, most recent first in proportion), their prior
// reuse distances over 1..60 and inf: many ties within a window, broken by
// the touch before and the page ID.
func BenchmarkRankLRU(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			cands := make([]PageState, n)
			for i := range cands {
				prior := 1 + rng.IntN(61)
				if prior == 61 {
					prior = Inf
				}
				cands[i] = PageState{Page: uint32(i), Now: 239, LastTouch: 239 - rng.IntN(240)*rng.IntN(240)/240, Prior: prior}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if len(RankLRU(cands, int64(n/2))) != n-n/2 {
					b.Fatal("wrong count")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/page")
		})
	}
}
