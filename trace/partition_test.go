package trace_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/trace"
)

// encodeParts returns tr as a partitioned binary trace of n partitions.
func encodeParts(t testing.TB, tr *trace.Trace, n int, seed uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriter(&buf, tr.Header, trace.Partitioning{Count: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trace.Copy(w, tr.NewReader()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unpartitioned returns tr's version 1 (or 2) encoding, from any header.
func unpartitioned(t testing.TB, tr *trace.Trace) []byte {
	t.Helper()
	return testutil.EncodeBinary(t, tr)
}

// TestPartitionedRoundTrip: a trace written partitioned reads back as the
// same events (its unpartitioned file is byte-identical to the
// original's), and partitioned again gives the same bytes.
func TestPartitionedRoundTrip(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 25))
	for i := range testutil.Count(300) {
		tr := binRandom(rng)
		if i%3 == 0 {
			s, err := trace.NewSampleReader(tr.NewReader(), trace.Sample{PPM: 500000, Seed: uint64(i)})
			if err != nil {
				t.Fatal(err)
			}
			if tr, err = trace.ReadAll(s); err != nil {
				t.Fatal(err)
			}
		}
		want := unpartitioned(t, tr)
		for _, n := range []int{1, 2, 7, 100} {
			data := encodeParts(t, tr, n, uint64(i))
			r, err := trace.NewBinaryReader(bytes.NewReader(data), "p.mdkt")
			if err != nil {
				t.Fatal(err)
			}
			if p := r.(trace.PartitionedReader).Partitioning(); p.Count != n {
				t.Fatalf("trace %d: read back %d partitions, want %d", i, p.Count, n)
			}
			got := binRead(t, data)
			binCheckIDs(t, got)
			if !bytes.Equal(unpartitioned(t, got), want) {
				t.Fatalf("trace %d, %d partitions: the events read back differ", i, n)
			}
			if again := encodeParts(t, got, n, uint64(i)); !bytes.Equal(again, data) {
				t.Fatalf("trace %d, %d partitions: rewriting changes the bytes", i, n)
			}
		}
	}
}

// binCheckIDs checks the reader guarantees of trace.Window.
func binCheckIDs(t *testing.T, tr *trace.Trace) {
	t.Helper()
	n := 0
	for i, w := range tr.Windows {
		if w.Index != i {
			t.Fatalf("window %d has index %d", i, w.Index)
		}
		n += len(w.New)
		for _, l := range [][]uint32{w.Accessed, w.Born, w.Freed} {
			s := slices.Clone(l)
			slices.Sort(s)
			if len(slices.Compact(s)) != len(l) || len(s) > 0 && int(s[len(s)-1]) >= n {
				t.Fatalf("window %d: a list repeats or has unannounced IDs", i)
			}
		}
	}
}

// TestPartitionedGen: the gen models' traces, partitioned, read back the
// same; the partitions' windows read one by one hold the same events.
func TestPartitionedGen(t *testing.T) {
	for _, tr := range genTraces(t) {
		want := unpartitioned(t, tr)
		var data []byte
		for _, n := range []int{10, trace.DefaultPartitions} {
			data = encodeParts(t, tr, n, 1)
			if !bytes.Equal(unpartitioned(t, binRead(t, data)), want) {
				t.Fatalf("%s: partitioned trace reads back different events", tr.Header.Source)
			}
			t.Logf("%s: %d bytes, %d partitions %d (%+.1f%%)", tr.Header.Source, len(want), n, len(data), 100*float64(len(data)-len(want))/float64(len(want)))
		}
		// Per partition: the same number of accesses in all.
		r, err := trace.NewBinaryReader(bytes.NewReader(data), "gen.mdkt")
		if err != nil {
			t.Fatal(err)
		}
		pr := r.(trace.PartitionedReader)
		var acc, accWant int
		for _, w := range tr.Windows {
			accWant += len(w.Accessed)
		}
		var win trace.Window
		for {
			_, n, err := pr.NextSegment()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for range n {
				for p := range pr.Selected() {
					if err := pr.PartitionWindow(p, &win, true); err != nil {
						t.Fatal(err)
					}
					acc += len(win.Accessed)
				}
			}
		}
		if acc != accWant {
			t.Fatalf("%s: partitions hold %d accesses, want %d", tr.Header.Source, acc, accWant)
		}
	}
}

// TestPartitionSubset: the first n partitions hold exactly the pages of
// the sample PartitionsOf names, when it says so.
func TestPartitionSubset(t *testing.T) {
	rng := testutil.Rand(5)
	for i := range testutil.Count(100) {
		tr := binRandom(rng)
		P := []int{10, 100, 3}[i%3]
		data := encodeParts(t, tr, P, 7)
		for _, ppm := range []int64{1000, 10000, 100000, 500000} {
			req := trace.Sample{PPM: ppm, Seed: 7}
			n, exact := trace.PartitionsOf(trace.Partitioning{Count: P, Seed: 7}, trace.Sample{}, req)
			r, err := trace.NewBinaryReader(bytes.NewReader(data), "p.mdkt")
			if err != nil {
				t.Fatal(err)
			}
			r.(trace.PartitionedReader).SelectPartitions(n)
			got, err := trace.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			kept := map[trace.Page]bool{}
			for _, p := range got.Pages {
				kept[p] = true
			}
			for _, p := range tr.Pages {
				if req.Keep(p) && !kept[p] {
					t.Fatalf("rate %d, %d of %d partitions: page %v of the sample is missing", ppm, n, P, p)
				}
				if exact && !req.Keep(p) && kept[p] {
					t.Fatalf("rate %d, %d of %d partitions said exact: page %v is not in the sample", ppm, n, P, p)
				}
			}
			s, err := trace.NewSampleReader(got.NewReader(), req)
			if err != nil {
				t.Fatal(err)
			}
			sub, err := trace.ReadAll(s)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := trace.NewSampleReader(tr.NewReader(), req)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := trace.ReadAll(ws)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(unpartitioned(t, sub), unpartitioned(t, whole)) {
				t.Fatalf("rate %d: the sample of the partitions differs from the sample of the trace", ppm)
			}
		}
	}
}

// genTraces returns every gen model's default trace (seed 7), and the
// README's in full when not -short.
func genTraces(t testing.TB) []*trace.Trace {
	var out []*trace.Trace
	for _, m := range gen.Models {
		c := gen.DefaultConfig
		c.Model, c.Seed = m, 7
		if testing.Short() {
			c.Pages = 5000
		}
		tr, err := trace.ReadAll(gen.NewReader(c))
		if err != nil {
			t.Fatal(err)
		}
		tr.Header.Source = m
		out = append(out, tr)
	}
	return out
}
