package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/trace"
)

// partVersions are the partitioned versions mdk reads: 3, written by the
// mdk of its time, and 4, written today.
var partVersions = []uint32{trace.BinaryPartitionedV3, trace.BinaryPartitionedVersion}

// encodeParts returns tr as a partitioned binary trace of n partitions, as
// NewPartitionedWriter writes it.
func encodeParts(t testing.TB, tr *trace.Trace, n int, seed uint64) []byte {
	t.Helper()
	return encodePartsV(t, tr, n, seed, trace.BinaryPartitionedVersion)
}

// encodePartsV returns tr as a partitioned binary trace of the version.
func encodePartsV(t testing.TB, tr *trace.Trace, n int, seed uint64, version uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriterVersion(&buf, tr.Header, trace.Partitioning{Count: n, Seed: seed}, version)
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
			for _, v := range partVersions {
				data := encodePartsV(t, tr, n, uint64(i), v)
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
					t.Fatalf("trace %d, %d partitions, version %d: the events read back differ", i, n, v)
				}
				// The merged new pages are version 1's, in its order.
				for k, w := range binRead(t, want).Windows {
					if !slices.Equal(got.Windows[k].New, w.New) {
						t.Fatalf("trace %d, %d partitions, version %d: window %d's new pages %v, want %v", i, n, v, k, got.Windows[k].New, w.New)
					}
				}
				if again := encodePartsV(t, got, n, uint64(i), v); !bytes.Equal(again, data) {
					t.Fatalf("trace %d, %d partitions, version %d: rewriting changes the bytes", i, n, v)
				}
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
			for _, v := range partVersions {
				data = encodePartsV(t, tr, n, 1, v)
				if !bytes.Equal(unpartitioned(t, binRead(t, data)), want) {
					t.Fatalf("%s: partitioned trace (version %d) reads back different events", tr.Header.Source, v)
				}
				t.Logf("%s: %d bytes, %d partitions, version %d: %d (%+.1f%%)", tr.Header.Source, len(want), n, v, len(data), 100*float64(len(data)-len(want))/float64(len(want)))
			}
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
		data := encodePartsV(t, tr, P, 7, partVersions[i%2])
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

// TestPartitionedVersionsAgree: versions 3 and 4 of a trace give the same
// windows partition by partition (new pages listed and counted, lists in
// the partition's IDs) and merged, on random traces and the gen models, so
// that every engine's equality with the unpartitioned trace on one version
// holds on the other.
func TestPartitionedVersionsAgree(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 4))
	var trs []*trace.Trace
	for range testutil.Count(100) {
		trs = append(trs, binRandom(rng))
	}
	if !testing.Short() {
		trs = append(trs, genTraces(t)...)
	}
	for i, tr := range trs {
		P := []int{1, 3, 16, 100}[i%4]
		d3 := encodePartsV(t, tr, P, uint64(i), trace.BinaryPartitionedV3)
		d4 := encodePartsV(t, tr, P, uint64(i), trace.BinaryPartitionedVersion)
		v3, v4 := partWindows(t, d3, i%2 == 0), partWindows(t, d4, i%2 == 0)
		for p := range v3 {
			if k := windowsDiffer(v3[p], v4[p]); k >= 0 {
				t.Fatalf("trace %d, %d partitions: partition %d's window %d differs: version 3 %+v, version 4 %+v", i, P, p, k, v3[p][k], v4[p][k])
			}
		}
		m3, m4 := binRead(t, d3), binRead(t, d4)
		if k := windowsDiffer(m3.Windows, m4.Windows); k >= 0 || !slices.Equal(m3.Pages, m4.Pages) {
			t.Fatalf("trace %d, %d partitions: merged windows differ at window %d, or the pages", i, P, k)
		}
	}
}

// windowsDiffer returns the first window in which a and b differ (nil and
// empty lists alike), or -1.
func windowsDiffer(a, b []trace.Window) int {
	for k := range max(len(a), len(b)) {
		if k >= len(a) || k >= len(b) {
			return k
		}
		x, y := a[k], b[k]
		if x.Index != y.Index || x.Unlisted != y.Unlisted || !slices.Equal(x.New, y.New) ||
			!slices.Equal(x.Accessed, y.Accessed) || !slices.Equal(x.Born, y.Born) || !slices.Equal(x.Freed, y.Freed) {
			return k
		}
	}
	return -1
}

// partWindows reads every partition's windows of data one by one.
func partWindows(t *testing.T, data []byte, count bool) [][]trace.Window {
	t.Helper()
	r, err := trace.NewBinaryReader(bytes.NewReader(data), "p.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	pr := r.(trace.PartitionedReader)
	out := make([][]trace.Window, pr.Selected())
	for {
		_, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			for p := range out {
				var w trace.Window
				if err := pr.PartitionWindow(p, &w, count); err != nil {
					t.Fatal(err)
				}
				out[p] = append(out[p], w)
			}
		}
	}
}

// TestPartitionedV3Golden: a version 3 file written by the mdk of its time
// (mdk convert testdata/example.mdkt --partitions 3, at ffa8c82's layout)
// still reads as the example trace, and the test writer of version 3
// writes those bytes.
func TestPartitionedV3Golden(t *testing.T) {
	old, err := os.ReadFile("testdata/v3/example.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/example.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	if old[8] != trace.BinaryPartitionedV3 {
		t.Fatalf("version %d, want 3", old[8])
	}
	got := binRead(t, old)
	if !bytes.Equal(unpartitioned(t, got), want) {
		t.Fatal("the version 3 file does not read as testdata/example.mdkt")
	}
	if again := encodePartsV(t, binRead(t, want), 3, trace.DefaultPartitionSeed, trace.BinaryPartitionedV3); !bytes.Equal(again, old) {
		t.Fatal("the version 3 test writer no longer writes the version 3 file's bytes")
	}
}
