package verify

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"mdk/internal/testutil"
	"mdk/mpc"
	"mdk/policy"
	"mdk/trace"
)

// walkGroups walks data (a partitioned trace) in the given groups of
// consecutive partitions ([lo, hi) each), one reader per group as a
// distributed worker would, and returns the groups' partials, each
// through its binary encoding.
func walkGroups(t *testing.T, data []byte, groups [][2]int, ss []policy.Setting) []*mpc.Partial {
	t.Helper()
	var out []*mpc.Partial
	for _, g := range groups {
		r, err := trace.NewReaderAuto(bytes.NewReader(data), "p.mdkt")
		if err != nil {
			t.Fatal(err)
		}
		p, err := mpc.WalkPartitions(context.Background(), r.(trace.PartitionedReader), g[0], g[1], ss)
		if err != nil {
			t.Fatalf("partitions %d..%d: %v", g[0], g[1]-1, err)
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var q mpc.Partial
		if err := q.UnmarshalBinary(b); err != nil {
			t.Fatalf("partitions %d..%d: decoding its own encoding: %v", g[0], g[1]-1, err)
		}
		if !reflect.DeepEqual(&q, p) {
			t.Fatalf("partitions %d..%d: the partial changes through its encoding", g[0], g[1]-1)
		}
		out = append(out, &q)
	}
	return out
}

// randomGroups cuts P partitions into random runs of consecutive ones.
func randomGroups(rng *rand.Rand, P int) [][2]int {
	var out [][2]int
	for lo := 0; lo < P; {
		hi := min(P, lo+1+rng.IntN(max(1, P/4)))
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// mergeRandomly merges the partials in a random tree: pairs picked at
// random, as a runner's combiner might.
func mergeRandomly(t *testing.T, rng *rand.Rand, ps []*mpc.Partial) *mpc.Partial {
	t.Helper()
	for len(ps) > 1 {
		i := rng.IntN(len(ps))
		j := rng.IntN(len(ps) - 1)
		if j >= i {
			j++
		}
		if err := ps[i].Merge(ps[j]); err != nil {
			t.Fatal(err)
		}
		ps[j] = ps[len(ps)-1]
		ps = ps[:len(ps)-1]
	}
	return ps[0]
}

// TestPartialsMerged: a partitioned trace walked partition by partition,
// or in random groups of partitions, by separate readers, the partials
// merged in a random tree, gives every default setting's curve of the
// unpartitioned trace, integer for integer: every gen model, the random
// traces of the equality tests and the real traces of importer/testdata,
// in 64 partitions.
func TestPartialsMerged(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 64))
	for name, tr := range partitionTraces(t) {
		ss := defaultSettings(tr.Header.Window)
		want, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		const P = 64
		data := partitioned(t, tr, P)
		one := make([][2]int, P)
		for p := range one {
			one[p] = [2]int{p, p + 1}
		}
		for _, groups := range [][][2]int{one, randomGroups(rng, P)} {
			m := mergeRandomly(t, rng, walkGroups(t, data, groups, ss))
			got, err := m.Results(context.Background(), ss)
			if err != nil {
				t.Fatalf("%s, %d groups: %v", name, len(groups), err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %d groups of %d partitions: the merged curves differ from the unpartitioned trace's", name, len(groups), P)
			}
		}
	}
}

// TestPartialRefusals: a merge short of a partition, a partition merged
// twice, partials of other settings, lopp's and lru's settings, and damaged
// encodings are errors.
func TestPartialRefusals(t *testing.T) {
	tr := testutil.RandomTrace(testutil.Rand(3))
	data := partitioned(t, tr, 8)
	ss := defaultSettings(tr.Header.Window)
	ps := walkGroups(t, data, [][2]int{{0, 3}, {3, 8}, {2, 4}}, ss)
	if _, err := ps[0].Results(context.Background(), ss); err == nil {
		t.Error("the partial of partitions 0..2 of 8 gave results")
	}
	if err := ps[1].Merge(ps[2]); err == nil {
		t.Error("partitions 3..7 and 2..3 merged")
	}
	paw, err := policy.Parse("paw:P=5,wait=1", tr.Header.Window)
	if err != nil {
		t.Fatal(err)
	}
	other := walkGroups(t, data, [][2]int{{3, 8}}, paw)[0]
	if err := ps[0].Merge(other); err == nil {
		t.Error("partials of other settings merged")
	}
	lru, err := policy.Parse("lru:C=10", tr.Header.Window)
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewReaderAuto(bytes.NewReader(data), "p.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mpc.WalkPartitions(context.Background(), r.(trace.PartitionedReader), 0, 8, lru); !errors.Is(err, mpc.ErrNotMergeable) {
		t.Errorf("lru walked partition by partition: %v", err)
	}
	b, err := ps[0].MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		var q mpc.Partial
		if err := q.UnmarshalBinary(b[:i]); err == nil {
			t.Fatalf("the encoding cut at byte %d of %d decoded", i, len(b))
		}
	}
}
