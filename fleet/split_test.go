package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mdk/fleet"
	"mdk/fleet/fleettest"
	"mdk/internal/testutil"
	"mdk/trace"
)

// runPieces runs a job as a distributed runner would: cut into pieces,
// each walked on its own, their states merged in a random order, the
// job's result from the merged state.
func runPieces(t *testing.T, plan *fleet.Plan, job string, split int, seed uint64) (fleet.JobResult, int) {
	t.Helper()
	ctx := context.Background()
	pieces := plan.Pieces(ctx, job, fleet.OpenFile, split)
	if len(pieces) == 1 && pieces[0].Whole() {
		jr, err := plan.RunJob(ctx, job, fleet.OpenFile)
		if err != nil {
			t.Fatal(err)
		}
		return jr, 1
	}
	var sts []fleet.PartState
	var size, windows int
	defer func() {
		if len(sts) > 0 && sts[0].Partial != nil {
			b, _ := sts[0].MarshalBinary()
			t.Logf("%s: %d pieces, %d bytes of states (%.0f a piece, %.1f a piece's window); merged: %d bytes (%.1f a window)",
				filepath.Base(job), len(pieces), size, float64(size)/float64(len(pieces)), float64(size)/float64(max(1, windows)),
				len(b), float64(len(b))/float64(max(1, len(sts[0].Partial.Windows))))
		}
	}()
	for _, pc := range pieces {
		st, err := plan.WalkPiece(ctx, pc, fleet.OpenFile)
		if err != nil {
			t.Fatal(err)
		}
		b, err := st.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		size += len(b)
		if st.Partial != nil {
			windows += len(st.Partial.Windows)
		}
		var back fleet.PartState
		if err := back.UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: a piece's state does not decode: %v", job, err)
		}
		sts = append(sts, back)
	}
	rng := testutil.Rand(seed)
	for len(sts) > 1 {
		i := rng.IntN(len(sts) - 1)
		sts[i] = fleet.MergeParts(sts[i], sts[len(sts)-1])
		sts = sts[:len(sts)-1]
		rng.Shuffle(len(sts), func(a, b int) { sts[a], sts[b] = sts[b], sts[a] })
	}
	jr, err := plan.FinishJob(ctx, sts[0])
	if err != nil {
		t.Fatal(err)
	}
	return jr, len(pieces)
}

// TestSplitEqualsWhole: a job whose trace is cut into pieces of its 64
// partitions (one per partition, and 5 uneven ones), walked apart and
// merged, has the result of its unpartitioned trace run whole, field for
// field (curve, tuning, yardstick), on every gen model and a real trace,
// with every default setting and an SLO.
func TestSplitEqualsWhole(t *testing.T) {
	parts, whole, err := fleettest.WritePartitioned(t.TempDir(), 64)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := fleet.Config{SLO: "max_pr<=2%", Window: trace.DefaultWindow}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if r := plan.SplitReason(); r != "" {
		t.Fatalf("the default policies do not split: %s", r)
	}
	for i, job := range parts {
		// The unpartitioned trace run whole, its name the job's (a
		// job's report names its trace), and the partitioned one run
		// whole (mdk fleet: mpc's partitioned pass on every core).
		unpart, err := plan.RunJob(context.Background(), whole[i], fleet.OpenFile)
		if err != nil || unpart.Error != "" {
			t.Fatalf("%s: %v %s", whole[i], err, unpart.Error)
		}
		wantJSON, err := json.Marshal(unpart)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON = bytes.ReplaceAll(wantJSON, []byte(whole[i]), []byte(job))
		local, err := plan.RunJob(context.Background(), job, fleet.OpenFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, split := range []int{0, 5} {
			got, n := runPieces(t, plan, job, split, uint64(i))
			if wantN := map[int]int{0: 64, 5: 5}[split]; n != wantN {
				t.Fatalf("%s, split %d: %d pieces, want %d", job, split, n, wantN)
			}
			if !reflect.DeepEqual(got, local) {
				t.Fatalf("%s in %d pieces: the job's result differs from the partitioned trace's run whole", job, n)
			}
			gotJSON, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Fatalf("%s in %d pieces: the job's result differs from its unpartitioned trace's", job, n)
			}
		}
	}
}

// TestSplitSize logs the states' sizes of a partitioned trace of one's
// own cut into its partitions (docs/fleet.md): MDK_SPLIT_TRACE=FILE,
// default policies.
func TestSplitSize(t *testing.T) {
	path := os.Getenv("MDK_SPLIT_TRACE")
	if path == "" {
		t.Skip("MDK_SPLIT_TRACE not set")
	}
	plan, err := fleet.Config{Window: trace.DefaultWindow}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []int{0, 8} {
		runPieces(t, plan, path, split, 1)
	}
}

// TestSplitWhole: what is not split runs whole: an unpartitioned trace, a
// plan with a controller, with lru, or sampled; and a trace whose
// partition is damaged fails as a job, with an error naming the piece.
func TestSplitWhole(t *testing.T) {
	dir := t.TempDir()
	parts, whole, err := fleettest.WritePartitioned(dir, 16)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	compile := func(c fleet.Config) *fleet.Plan {
		c.Window = trace.DefaultWindow
		p, err := c.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := compile(fleet.Config{Policies: []string{"age", "opp"}})
	if pcs := plain.Pieces(ctx, whole[0], fleet.OpenFile, 0); len(pcs) != 1 || !pcs[0].Whole() {
		t.Errorf("an unpartitioned trace: %v, want one whole piece", pcs)
	}
	if pcs := plain.Pieces(ctx, parts[0], fleet.OpenFile, 1); len(pcs) != 1 || !pcs[0].Whole() {
		t.Errorf("split 1: %v, want one whole piece", pcs)
	}
	for _, c := range []fleet.Config{
		{Policies: []string{"age", "auto:age,A=0..12,slo=max_pr<=5%,history=6,every=2"}},
		{Policies: []string{"lru:C=100"}},
		{Policies: []string{"age"}, SamplePPM: 100000, SampleSeed: 1},
	} {
		p := compile(c)
		if p.SplitReason() == "" {
			t.Errorf("%v: splits", c.Policies)
		}
		if pcs := p.Pieces(ctx, parts[0], fleet.OpenFile, 0); len(pcs) != 1 || !pcs[0].Whole() {
			t.Errorf("%v: %d pieces, want one whole", c.Policies, len(pcs))
		}
	}
	// A byte of the trace's body flipped where the whole run notices.
	data, err := os.ReadFile(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "damaged.mdkt")
	for off := len(data) / 2; ; off += 97 {
		if off >= len(data) {
			t.Fatal("no damage found that the whole run notices")
		}
		d := slices.Clone(data)
		d[off] ^= 0x40
		if err := os.WriteFile(bad, d, 0o666); err != nil {
			t.Fatal(err)
		}
		if jr, err := plain.RunJob(ctx, bad, fleet.OpenFile); err != nil || jr.Error != "" {
			break
		}
	}
	jr, n := runPieces(t, plain, bad, 4, 1)
	if n != 4 || !strings.Contains(jr.Error, "damaged.mdkt: partitions ") {
		t.Errorf("the damaged trace in %d pieces: error %q, want one naming the piece's partitions", n, jr.Error)
	}
	t.Logf("damaged: %s", jr.Error)
}
