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
// (docs/agent.md, "Controllers").
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
// them all; a limit of 0 or below keeps none. Then against a sort on
// random cases.
func TestRation(t *testing.T) {
	last := map[uint32]int{7: 3, 2: 1, 5: 1, 9: 0, 4: 3}
	get := func(id uint32) int { return last[id] }
	set := func(ids []uint32) []uint32 { return slices.Sorted(slices.Values(ids)) }
	for n, want := range map[int64][]uint32{3: {2, 5, 9}, 4: {2, 4, 5, 9}, 2: {2, 9}, 1: {9}, 5: {2, 4, 5, 7, 9}, 9: {2, 4, 5, 7, 9}, 0: nil, -1: nil} {
		if got := set(Ration([]uint32{7, 2, 5, 9, 4}, get, n)); !slices.Equal(got, want) {
			t.Errorf("limit %d: %v, want %v", n, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		d := 1 + rng.IntN(40)
		lt := make([]int, 64)
		var due []uint32
		for _, id := range rng.Perm(64)[:d] {
			lt[id] = rng.IntN(1 + rng.IntN(10))
			due = append(due, uint32(id))
		}
		n := int64(rng.IntN(d + 2))
		want := slices.Clone(due)
		slices.SortFunc(want, func(a, b uint32) int {
			if lt[a] != lt[b] {
				return lt[a] - lt[b]
			}
			return int(a) - int(b)
		})
		want = set(want[:min(n, int64(d))])
		if got := set(Ration(due, func(id uint32) int { return lt[id] }, n)); !slices.Equal(got, want) {
			t.Fatalf("limit %d: %v, want %v", n, got, want)
		}
	}
}
