package mpc

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"mdk/trace"
)

func testPartial(parts trace.Partitioning, lo, hi int) *Partial {
	return &Partial{PageSize: 4096, Partitions: parts, Ranges: [][2]int{{lo, hi}}, Classes: []int{2},
		Windows: []PartialWindow{{Accessed: 3, Alive: 5, Closed: []trace.GapCount{{Idle: 1, Class: 0, N: 2}}}},
		End:     PartialWindow{Alive: 5}}
}

// TestPartialCuts: a partial's encoding keeps its trace's cuts, and two
// partials of the same partition count and seed but other cuts (other
// pages) do not merge; an encoding of the mdk before version 5 (no cuts)
// still decodes.
func TestPartialCuts(t *testing.T) {
	ladder := trace.Partitioning{Count: 12, Seed: 1, Cuts: trace.DefaultCuts(12, 1_000_000)}
	equal := trace.Partitioning{Count: 12, Seed: 1, Cuts: trace.EqualCuts(12, 1_000_000)}

	b, err := testPartial(ladder, 0, 6).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Partial
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !back.Partitions.Equal(ladder) {
		t.Fatalf("decoded partitions %+v, want %+v", back.Partitions, ladder)
	}

	if err := back.Merge(testPartial(ladder, 6, 12)); err != nil {
		t.Fatalf("same cuts: %v", err)
	}
	err = testPartial(ladder, 0, 6).Merge(testPartial(equal, 6, 12))
	if err == nil || !strings.Contains(err.Error(), "cut differently") {
		t.Fatalf("a ladder's partial merged with equal partitions' partial: err %v", err)
	}

	// The mdk before version 5 wrote "mdkpart1" and no cuts.
	old := testPartial(trace.Partitioning{Count: 4, Seed: 1}, 1, 3)
	b, err = old.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// page size 4096 (2 bytes), 4 partitions, seed 1, then no cuts (0): drop the 0.
	v1 := slices.Concat(partialMagic1, b[len(partialMagic):len(partialMagic)+4], b[len(partialMagic)+5:])
	var q Partial
	if err := q.UnmarshalBinary(v1); err != nil {
		t.Fatalf("an mdkpart1 encoding: %v", err)
	}
	if q.Partitions.Cuts != nil || q.Partitions.Count != 4 || q.Ranges[0] != [2]int{1, 3} {
		t.Fatalf("mdkpart1 decoded as %+v", q)
	}
	if again, _ := q.MarshalBinary(); !bytes.Equal(again, b) {
		t.Fatalf("mdkpart1 re-encoded as %x, want %x", again, b)
	}
}

// TestPartialLyingCuts: cuts that are not Count+1 nondecreasing digits
// from 0 are an error naming the byte offset.
func TestPartialLyingCuts(t *testing.T) {
	for _, cuts := range [][]uint32{
		{0, 10, 5, 1_000_000},  // decreasing
		{3, 10, 20, 1_000_000}, // not from 0
		{0, 10, 1_000_000},     // too few for 3 partitions
		{0, 10, 20, 2_000_000}, // past the digits
	} {
		p := testPartial(trace.Partitioning{Count: 3, Seed: 1}, 0, 3)
		p.Partitions.Cuts = cuts
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var q Partial
		err = q.UnmarshalBinary(b)
		if err == nil || !strings.Contains(err.Error(), "byte offset") {
			t.Errorf("cuts %v: err %v, want an error naming the byte offset", cuts, err)
		}
	}
}
