package mpc

import (
	"testing"

	"mdk/trace"
)

// FuzzPartialDecode: any bytes decode to a partial or an error, never a
// panic, and a decoded partial's encoding decodes to it again.
func FuzzPartialDecode(f *testing.F) {
	p := &Partial{PageSize: 4096, Partitions: trace.Partitioning{Count: 4, Seed: 1}, Ranges: [][2]int{{1, 3}}, Classes: []int{2, 6},
		Windows: []PartialWindow{
			{Accessed: 3, Alive: 5, Closed: []trace.GapCount{{Idle: 0, Class: 1, N: 2}, {Idle: 4, Class: 0, N: 1}}},
			{Accessed: 1, Alive: 4, Open: []trace.GapCount{{Idle: 1, Class: 2, N: 7}}},
		},
		End: PartialWindow{Alive: 9, Open: []trace.GapCount{{Idle: 2, Class: 0, N: 1}}}}
	b, err := p.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	p.Partitions.Cuts = trace.DefaultCuts(4, 1_000_000)
	if b, err = p.MarshalBinary(); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(partialMagic)
	f.Add(partialMagic1)
	f.Fuzz(func(t *testing.T, data []byte) {
		var q Partial
		if err := q.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := q.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var r Partial
		if err := r.UnmarshalBinary(b); err != nil {
			t.Fatalf("a decoded partial's encoding does not decode: %v", err)
		}
	})
}
