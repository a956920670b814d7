package agent

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"mdk/policy"
	"mdk/trace"
)

// BenchmarkDecideCapacity measures the decide stage alone (no pagemap, no
// kernel) at the end of one window over n alive resident pages of one
// target, whose last touches spread over 240 windows as BenchmarkRankLRU's:
// a capacity (lru:C=50%, and the capacity senpai names each window) ranks
// all of them (the candidates' states, policy.RankLRU, the decided pages
// sorted back to page order), a page-by-page policy (age:A=2) asks its
// Decider of each. The difference is the ranking's cost per window.
func BenchmarkDecideCapacity(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, spec := range []string{"age:A=2", "lru:C=50%"} {
			b.Run(fmt.Sprintf("pages=%d/%s", n, spec), func(b *testing.B) {
				ss, err := policy.Parse(spec, trace.DefaultWindow)
				if err != nil || len(ss) != 1 {
					b.Fatalf("parse %s: %v %v", spec, ss, err)
				}
				const k = 239
				a := &agent{ctl: FixedSetting(ss[0], nil), tgts: []target{{}}}
				a.pages, a.tgt = make([]page, n), make([]int32, n)
				rng := rand.New(rand.NewPCG(1, 2))
				for id := range a.pages {
					p := &a.pages[id]
					p.Alive, p.Last, p.Prior = true, k-rng.IntN(240)*rng.IntN(240)/240, 1+rng.IntN(60)
				}
				win := &trace.Window{}
				var decided int
				for b.Loop() {
					d, err := a.decide(k, win, &Row{Alive: int64(n)})
					if err != nil {
						b.Fatal(err)
					}
					decided = len(d)
					b.StopTimer()
					for id := range a.pages {
						a.pages[id].absent = false
					}
					b.StartTimer()
				}
				if decided == 0 {
					b.Fatal("nothing decided")
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/page")
				b.ReportMetric(float64(decided), "decided/window")
			})
		}
	}
}
