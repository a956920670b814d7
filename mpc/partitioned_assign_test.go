package mpc

import (
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// TestAssignPartitions: every partition goes to one worker, in increasing
// order; equal partitions go round-robin; the default cuts of 12
// partitions give 2 workers equal shares (and 100 partitions within 1%);
// on random cuts no worker gets more than the mean plus the widest
// partition (the bound of longest-processing-time-first).
func TestAssignPartitions(t *testing.T) {
	load := func(parts trace.Partitioning, ws [][]int) []uint64 {
		t.Helper()
		var seen []int
		out := make([]uint64, len(ws))
		for i, ps := range ws {
			if !slices.IsSorted(ps) {
				t.Fatalf("worker %d's partitions %v not in order", i, ps)
			}
			for _, p := range ps {
				out[i] += parts.Width(p)
			}
			seen = append(seen, ps...)
		}
		slices.Sort(seen)
		for p := range parts.Count {
			if p >= len(seen) || seen[p] != p {
				t.Fatalf("partitions assigned %v, want each of 0..%d once", seen, parts.Count-1)
			}
		}
		return out
	}
	eq := trace.Partitioning{Count: 10, Cuts: trace.EqualCuts(10, trace.SampleAll)}
	for i, ps := range assignPartitions(eq, 10, 3) {
		for _, p := range ps {
			if p%3 != i {
				t.Fatalf("equal partitions: worker %d has %v, want round-robin", i, ps)
			}
		}
	}
	def := trace.Partitioning{Count: trace.DefaultPartitions, Cuts: trace.DefaultCuts(trace.DefaultPartitions, trace.SampleAll)}
	if l := load(def, assignPartitions(def, def.Count, 2)); l[0] != l[1] {
		t.Errorf("default cuts on 2 workers: shares %v, want equal", l)
	}
	hundred := trace.Partitioning{Count: 100, Cuts: trace.DefaultCuts(100, trace.SampleAll)}
	if l := load(hundred, assignPartitions(hundred, 100, 2)); max(l[0], l[1]) > 505000 {
		t.Errorf("100 default partitions on 2 workers: shares %v, want within 1%%", l)
	}
	rng := testutil.Rand(testutil.Seed(t, 8))
	for range testutil.Count(200) {
		n := 1 + rng.IntN(300)
		set := map[uint32]bool{0: true, trace.SampleAll: true}
		for len(set) < n+1 {
			set[uint32(1+rng.IntN(trace.SampleAll-1))] = true
		}
		cuts := slices.Sorted(func(yield func(uint32) bool) {
			for c := range set {
				if !yield(c) {
					return
				}
			}
		})
		parts := trace.Partitioning{Count: n, Cuts: cuts}
		nw := 1 + rng.IntN(min(n, 16))
		var widest uint64
		for p := range n {
			widest = max(widest, parts.Width(p))
		}
		for i, l := range load(parts, assignPartitions(parts, n, nw)) {
			if l > trace.SampleAll/uint64(nw)+widest {
				t.Fatalf("%d partitions on %d workers: worker %d has %d digits, above the mean %d plus the widest %d", n, nw, i, l, trace.SampleAll/nw, widest)
			}
		}
	}
}
