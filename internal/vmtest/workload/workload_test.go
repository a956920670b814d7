package workload

import (
	"slices"
	"testing"
)

// TestSchedule: a phase touches and frees only existing pages, faults in
// only absent ones, and its three sets are disjoint; Exists follows them.
func TestSchedule(t *testing.T) {
	for _, block := range []int{1, 64} {
		s := NewBlockSchedule(7, 1000, 6, block)
		if !slices.Equal(s.Initial, NewBlockSchedule(7, 1000, 6, block).Initial) {
			t.Fatal("not deterministic")
		}
		if len(s.Phases[0].Touch)+len(s.Phases[0].Alloc)+len(s.Phases[0].Free) != 0 {
			t.Fatal("phase 0 is not empty")
		}
		exists := s.Exists(-1)
		if !slices.Equal(exists, s.Initial) {
			t.Fatal("Exists(-1) != Initial")
		}
		for k, p := range s.Phases {
			in := func(i int) bool { _, ok := slices.BinarySearch(exists, i); return ok }
			for _, i := range append(slices.Clone(p.Touch), p.Free...) {
				if !in(i) {
					t.Fatalf("block %d phase %d touches or frees absent page %d", block, k, i)
				}
			}
			for _, i := range p.Alloc {
				if in(i) {
					t.Fatalf("block %d phase %d faults in existing page %d", block, k, i)
				}
			}
			for _, i := range p.Touch {
				if slices.Contains(p.Free, i) {
					t.Fatalf("phase %d touches and frees %d", k, i)
				}
			}
			if k > 0 && len(p.Touch) == 0 {
				t.Fatalf("phase %d touches nothing", k)
			}
			exists = s.Exists(k)
		}
	}
}
