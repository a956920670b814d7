package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkRation measures a limit's ranking (damos's quota when it binds):
// n due pages with random last touches over 240 windows, half of them
// kept. The agent pays it once per window on the due pages
// (docs/bench.md, "Rationing").
//
//	go test ./policy -run '^$' -bench Ration -benchtime 20x
func BenchmarkRation(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		rng := rand.New(rand.NewPCG(1, 2))
		last := make([]int, n)
		due := make([]uint32, n)
		for i := range last {
			last[i], due[i] = rng.IntN(240), uint32(i)
		}
		b.Run(fmt.Sprintf("due=%d", n), func(b *testing.B) {
			work := make([]uint32, n)
			for b.Loop() {
				copy(work, due)
				Ration(work, func(id uint32) int { return last[id] }, int64(n/2))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/page")
		})
	}
}

// TestRation checks the order on a hand case: the earliest last touch
// first, ties to the lower ID; a limit at or above the due pages keeps
// them all, in their order; a negative limit keeps none.
func TestRation(t *testing.T) {
	last := map[uint32]int{7: 3, 2: 1, 5: 1, 9: 0, 4: 3}
	get := func(id uint32) int { return last[id] }
	if got := Ration([]uint32{7, 2, 5, 9, 4}, get, 3); !slices.Equal(got, []uint32{9, 2, 5}) {
		t.Errorf("limit 3: %v, want [9 2 5]", got)
	}
	if got := Ration([]uint32{7, 2, 5, 9, 4}, get, 4); !slices.Equal(got, []uint32{9, 2, 5, 4}) {
		t.Errorf("limit 4: %v, want [9 2 5 4]", got)
	}
	if got := Ration([]uint32{7, 2}, get, 2); !slices.Equal(got, []uint32{7, 2}) {
		t.Errorf("limit 2 of 2: %v", got)
	}
	if got := Ration([]uint32{7, 2}, get, 0); len(got) != 0 {
		t.Errorf("limit 0: %v", got)
	}
}
