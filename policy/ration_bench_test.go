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
				Ration(work, func(id uint32) (int, int) { return last[id], 240 - last[id] }, int64(n/2))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/page")
		})
	}
}

// TestRation checks the order on a hand case: the earliest last touch
// first; on a tie the earlier touch before it (the larger prior, a first
// touch's Inf largest); on a tie the larger ID; a limit at or above the due
// pages keeps them all; a limit of 0 or below keeps none. Then, on random
// cases with many ties, that a limit reclaims exactly the pages a capacity
// of the rest keeps out (RankLRU): one order for both.
func TestRation(t *testing.T) {
	type tp struct{ last, prior int }
	touch := map[uint32]tp{7: {3, 1}, 2: {1, 4}, 5: {1, Inf}, 9: {0, 2}, 4: {3, 1}, 6: {1, 4}}
	get := func(id uint32) (int, int) { return touch[id].last, touch[id].prior }
	set := func(ids []uint32) []uint32 { return slices.Sorted(slices.Values(ids)) }
	// Least recent first: 9 (last 0), 5 (last 1, first touch), 6 and 2
	// (last 1, prior 4: the larger ID first), 7 (last 3, prior 1: larger ID), 4.
	for n, want := range map[int64][]uint32{1: {9}, 2: {5, 9}, 3: {5, 6, 9}, 4: {2, 5, 6, 9}, 5: {2, 5, 6, 7, 9}, 6: {2, 4, 5, 6, 7, 9}, 9: {2, 4, 5, 6, 7, 9}, 0: nil, -1: nil} {
		if got := set(Ration([]uint32{7, 2, 5, 9, 4, 6}, get, n)); !slices.Equal(got, want) {
			t.Errorf("limit %d: %v, want %v", n, got, want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		d := 1 + rng.IntN(40)
		lt, pr := make([]int, 64), make([]int, 64)
		var due []uint32
		var states []PageState
		for _, id := range rng.Perm(64)[:d] {
			lt[id], pr[id] = rng.IntN(1+rng.IntN(10)), 1+rng.IntN(3)
			if rng.IntN(4) == 0 {
				pr[id] = Inf
			}
			due = append(due, uint32(id))
			states = append(states, PageState{Page: uint32(id), LastTouch: lt[id], Prior: pr[id]})
		}
		n := int64(rng.IntN(d + 2))
		var want []uint32
		for _, st := range RankLRU(states, int64(d)-n) {
			want = append(want, st.Page)
		}
		want = set(want)
		if got := set(Ration(due, func(id uint32) (int, int) { return lt[id], pr[id] }, n)); !slices.Equal(got, want) {
			t.Fatalf("limit %d of %v: %v, want %v", n, states, got, want)
		}
	}
}
