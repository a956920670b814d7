package trace_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/trace"
)

// partVersions are the partitioned versions mdk reads: 3 and 4, written by
// the mdk of their time, and 5, written today.
var partVersions = []uint32{trace.BinaryPartitionedV3, trace.BinaryPartitionedV4, trace.BinaryPartitionedVersion}

// encodeParts returns tr as a partitioned binary trace of n partitions, as
// NewPartitionedWriter writes it.
func encodeParts(t testing.TB, tr *trace.Trace, n int, seed uint64) []byte {
	t.Helper()
	return encodePartsV(t, tr, n, seed, trace.BinaryPartitionedVersion)
}

// encodePartsV returns tr as a partitioned binary trace of the version
// (version 5: trace.DefaultCuts).
func encodePartsV(t testing.TB, tr *trace.Trace, n int, seed uint64, version uint32) []byte {
	t.Helper()
	return encodePartsP(t, tr, trace.Partitioning{Count: n, Seed: seed}, version)
}

// encodePartsP returns tr as a partitioned binary trace of the version and
// partitions.
func encodePartsP(t testing.TB, tr *trace.Trace, parts trace.Partitioning, version uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriterVersion(&buf, tr.Header, parts, version)
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
		for _, n := range []int{10, trace.DefaultPartitions, 100} {
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
	for i := range testutil.Count(200) {
		tr := binRandom(rng)
		P := []int{10, 100, 3, 12}[i%4]
		var data []byte
		if i%4 == 3 {
			// Version 5 with cuts of its own.
			data = encodePartsP(t, tr, trace.Partitioning{Count: P, Seed: 7, Cuts: randCuts(rng, P, traceRate(tr))}, trace.BinaryPartitionedVersion)
		} else {
			data = encodePartsV(t, tr, P, 7, partVersions[i%4])
		}
		r0, err := trace.NewBinaryReader(bytes.NewReader(data), "p.mdkt")
		if err != nil {
			t.Fatal(err)
		}
		parts := r0.(trace.PartitionedReader).Partitioning()
		P = parts.Count
		for _, ppm := range []int64{1000, 10000, 100000, 500000} {
			req := trace.Sample{PPM: ppm, Seed: 7}
			n, exact := trace.PartitionsOf(parts, tr.Header.Sample, req)
			if tr.Header.Sample.All() || tr.Header.Sample.Seed == 7 && ppm <= tr.Header.Sample.PPM {
				// The first n partitions end at the rate or beyond; n-1 of them before it.
				if c := parts.Cuts[n]; c < uint32(ppm) || parts.Cuts[n-1] >= uint32(ppm) || exact != (c == uint32(ppm)) {
					t.Fatalf("rate %d, cuts %v: %d partitions, exact %v", ppm, parts.Cuts, n, exact)
				}
			}
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

// TestPartitionedVersionsAgree: versions 3, 4 and 5 (with version 4's
// equal cuts) of a trace give the same
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
		d4 := encodePartsV(t, tr, P, uint64(i), trace.BinaryPartitionedV4)
		// Version 5 with version 4's equal cuts (none empty: else version 5
		// drops them, and the partitions' numbers differ).
		eq := trace.EqualCuts(P, traceRate(tr))
		vs := [][]byte{d3, d4}
		if len(slices.Compact(slices.Clone(eq))) == len(eq) {
			vs = append(vs, encodePartsP(t, tr, trace.Partitioning{Count: P, Seed: uint64(i), Cuts: eq}, trace.BinaryPartitionedVersion))
		}
		v3, m3 := partWindows(t, d3, i%2 == 0), binRead(t, d3)
		for j, d := range vs[1:] {
			v4 := partWindows(t, d, i%2 == 0)
			for p := range v3 {
				if k := windowsDiffer(v3[p], v4[p]); k >= 0 {
					t.Fatalf("trace %d, %d partitions: partition %d's window %d differs: version 3 %+v, version %d %+v", i, P, p, k, v3[p][k], 4+j, v4[p][k])
				}
			}
			m4 := binRead(t, d)
			if k := windowsDiffer(m3.Windows, m4.Windows); k >= 0 || !slices.Equal(m3.Pages, m4.Pages) {
				t.Fatalf("trace %d, %d partitions: versions 3 and %d: merged windows differ at window %d, or the pages", i, P, 4+j, k)
			}
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
	return readPartWindows(t, pr, intsTo(pr.Selected()), count)
}

// readPartWindows reads partitions parts of pr, which has them selected,
// one window of each at a time, and returns their windows by partition
// (of all the trace's partitions).
func readPartWindows(t *testing.T, pr trace.PartitionedReader, parts []int, count bool) [][]trace.Window {
	t.Helper()
	out := make([][]trace.Window, pr.Partitioning().Count)
	for {
		_, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			for _, p := range parts {
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
	partGolden(t, "testdata/v3/example.mdkt", trace.BinaryPartitionedV3)
}

// TestPartitionedV4Golden: the same for a version 4 file (mdk convert
// testdata/example.mdkt --partitions 3, at e842d91).
func TestPartitionedV4Golden(t *testing.T) {
	partGolden(t, "testdata/v4/example.mdkt", trace.BinaryPartitionedV4)
}

func partGolden(t *testing.T, path string, v uint32) {
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/example.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	if uint32(old[8]) != v {
		t.Fatalf("version %d, want %d", old[8], v)
	}
	got := binRead(t, old)
	if !bytes.Equal(unpartitioned(t, got), want) {
		t.Fatalf("the version %d file does not read as testdata/example.mdkt", v)
	}
	if again := encodePartsV(t, binRead(t, want), 3, trace.DefaultPartitionSeed, v); !bytes.Equal(again, old) {
		t.Fatalf("the version %d test writer no longer writes the version %d file's bytes", v, v)
	}
}

// traceRate is tr's rate R: the digits below it are its pages'.
func traceRate(tr *trace.Trace) uint64 {
	if tr.Header.Sample.All() {
		return trace.SampleAll
	}
	return uint64(tr.Header.Sample.PPM)
}

// randCuts returns the cuts of at most n random nonempty partitions of the
// digits below r: every partition at least one digit, some of one digit.
func randCuts(rng *rand.Rand, n int, r uint64) []uint32 {
	set := map[uint32]bool{0: true, uint32(r): true}
	for len(set) < min(n+1, int(r)+1) {
		var c uint32
		switch rng.IntN(3) {
		case 0: // near the start, where samples cut
			c = uint32(1 + rng.Uint64N(min(r, 1000)))
		case 1: // next to another
			c = uint32(1 + rng.Uint64N(r))
			if set[c] && c+1 < uint32(r) {
				c++
			}
		default:
			c = uint32(rng.Uint64N(r + 1))
		}
		set[c] = true
	}
	cuts := make([]uint32, 0, len(set))
	for c := range set {
		cuts = append(cuts, c)
	}
	slices.Sort(cuts)
	return cuts
}

// TestPartitionCuts: the default layout's cuts; equal cuts give version
// 4's partitions; a partitioner of any cuts puts each digit where a scan
// of the cuts does (checked through the files: a reader checks each new
// page's partition, and partition p's pages must be those of its digits).
func TestPartitionCuts(t *testing.T) {
	want := []uint32{0, 1000, 10000, 100000}
	for c := uint32(200000); c <= 1000000; c += 100000 {
		want = append(want, c)
	}
	if got := trace.DefaultCuts(trace.DefaultPartitions, trace.SampleAll); !slices.Equal(got, want) {
		t.Fatalf("DefaultCuts(%d, 10^6) = %v, want %v", trace.DefaultPartitions, got, want)
	}
	for _, tc := range []struct {
		n    int
		r    uint64
		want []uint32
	}{
		{1, 1000000, []uint32{0, 1000000}},
		{3, 1000000, []uint32{0, 333334, 666667, 1000000}},
		{4, 1000000, []uint32{0, 1000, 10000, 100000, 1000000}},
		{5, 10000, []uint32{0, 10, 100, 1000, 5500, 10000}},
		{10, 1, []uint32{0, 1}},
		{6, 20, []uint32{0, 2, 8, 14, 20}},
	} {
		if got := trace.DefaultCuts(tc.n, tc.r); !slices.Equal(got, tc.want) {
			t.Errorf("DefaultCuts(%d, %d) = %v, want %v", tc.n, tc.r, got, tc.want)
		}
	}
	if c := trace.DefaultCuts(100, trace.SampleAll); len(c) != 101 || c[3] != 100000 || c[100] != 1000000 {
		t.Errorf("DefaultCuts(100, 10^6) = %v", c)
	}
	rng := testutil.Rand(testutil.Seed(t, 51))
	for i := range testutil.Count(100) {
		n, r := 1+rng.IntN(200), []uint64{1000000, 500000, 1000, 1}[i%4]
		eq := trace.EqualCuts(n, r)
		for range 100 {
			q := rng.Uint64N(r)
			p := int(q * uint64(n) / r)
			if eq[p] > uint32(q) || eq[p+1] <= uint32(q) {
				t.Fatalf("EqualCuts(%d, %d): digit %d of partition %d outside [%d, %d)", n, r, q, p, eq[p], eq[p+1])
			}
		}
	}
	for i := range testutil.Count(60) {
		tr := binRandom(rng)
		r := traceRate(tr)
		cuts := randCuts(rng, []int{2, 5, 40, 300}[i%4], r)
		data := encodePartsP(t, tr, trace.Partitioning{Count: len(cuts) - 1, Seed: 9, Cuts: cuts}, trace.BinaryPartitionedVersion)
		if data[8] != trace.BinaryPartitionedVersion {
			t.Fatalf("version %d", data[8])
		}
		if !bytes.Equal(unpartitioned(t, binRead(t, data)), unpartitioned(t, tr)) {
			t.Fatalf("trace %d, cuts %v: reads back different events", i, cuts)
		}
		r0, err := trace.NewBinaryReader(bytes.NewReader(data), "c.mdkt")
		if err != nil {
			t.Fatal(err)
		}
		pr := r0.(trace.PartitionedReader)
		if got := pr.Partitioning(); !slices.Equal(got.Cuts, cuts) || got.Count != len(cuts)-1 {
			t.Fatalf("trace %d: cuts %v read back as %+v", i, cuts, got)
		}
		// Each partition holds exactly the pages of its digits.
		seed := uint64(9)
		if !tr.Header.Sample.All() {
			seed = tr.Header.Sample.Seed
		}
		for p, ws := range partWindows(t, data, false) {
			for _, w := range ws {
				for _, pg := range w.New {
					q := uint32(trace.Sample{Seed: seed}.Hash(pg) % trace.SampleAll)
					if q < cuts[p] || q >= cuts[p+1] {
						t.Fatalf("trace %d: page %v (digit %d) in partition %d of cuts %v", i, pg, q, p, cuts)
					}
				}
			}
		}
	}
}

// TestPartitionCutsRejected: a writer refuses cuts that are not a
// partition of the trace's digits, and version 4 anything but equal ones.
func TestPartitionCutsRejected(t *testing.T) {
	h := trace.Header{PageSize: 4096, Window: 1e9}
	for _, tc := range []struct {
		n    int
		cuts []uint32
		v    uint32
		want string
	}{
		{2, []uint32{0, 10, 999999}, trace.BinaryPartitionedVersion, "not at the trace's rate"},
		{3, []uint32{0, 10, 5, 1000000}, trace.BinaryPartitionedVersion, "nondecreasing"},
		{2, []uint32{1, 10, 1000000}, trace.BinaryPartitionedVersion, "start at 1"},
		{2, []uint32{0, 1000000}, trace.BinaryPartitionedVersion, "for 2 partitions"},
		{2, []uint32{0, 10, 1000000}, trace.BinaryPartitionedV4, "equal partitions only"},
	} {
		n := tc.n
		_, err := trace.NewPartitionedWriterVersion(io.Discard, h, trace.Partitioning{Count: n, Seed: 1, Cuts: tc.cuts}, tc.v)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cuts %v, version %d: %v, want an error saying %q", tc.cuts, tc.v, err, tc.want)
		}
	}
	// Repeated cuts are empty partitions, which version 5 drops.
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriterVersion(&buf, h, trace.Partitioning{Count: 3, Seed: 1, Cuts: []uint32{0, 10, 10, 1000000}}, trace.BinaryPartitionedVersion)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewBinaryReader(bytes.NewReader(buf.Bytes()), "d.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.(trace.PartitionedReader).Partitioning(); !slices.Equal(got.Cuts, []uint32{0, 10, 1000000}) {
		t.Errorf("cuts 0, 10, 10, 10^6 written as %v", got.Cuts)
	}
}

// TestPartitionRanges: Ranges covers the partitions once, in nonempty
// consecutive ranges, each ending at the cut nearest its share (the
// default 12 on 2 ranges: 50% each; equal partitions: about P/n each).
func TestPartitionRanges(t *testing.T) {
	def := trace.Partitioning{Count: trace.DefaultPartitions, Cuts: trace.DefaultCuts(trace.DefaultPartitions, trace.SampleAll)}
	if got := def.Ranges(2); !slices.Equal(got, [][2]int{{0, 7}, {7, 12}}) {
		t.Errorf("default cuts in 2: %v, want [0 7] [7 12] (50%% each)", got)
	}
	if got := (trace.Partitioning{Count: 10}).Ranges(3); !slices.Equal(got, [][2]int{{0, 3}, {3, 7}, {7, 10}}) {
		t.Errorf("10 equal partitions in 3: %v", got)
	}
	rng := testutil.Rand(testutil.Seed(t, 9))
	for range testutil.Count(300) {
		cuts := randCuts(rng, 1+rng.IntN(100), []uint64{trace.SampleAll, 1000, 7}[rng.IntN(3)])
		p := trace.Partitioning{Count: len(cuts) - 1, Cuts: cuts}
		n := 1 + rng.IntN(20)
		rs := p.Ranges(n)
		if len(rs) != min(n, p.Count) || rs[0][0] != 0 || rs[len(rs)-1][1] != p.Count {
			t.Fatalf("cuts %v in %d: %v", cuts, n, rs)
		}
		r := uint64(cuts[p.Count])
		for i, x := range rs {
			if x[0] >= x[1] || i > 0 && x[0] != rs[i-1][1] {
				t.Fatalf("cuts %v in %d: ranges %v not consecutive and nonempty", cuts, n, rs)
			}
			if i == len(rs)-1 {
				continue
			}
			// No other cut is nearer the share than the one it ends at,
			// unless that would empty a range.
			t2 := float64(i+1) * float64(r) / float64(len(rs))
			d := math.Abs(float64(cuts[x[1]]) - t2)
			for k := x[0] + 1; k <= p.Count-(len(rs)-1-i); k++ {
				if math.Abs(float64(cuts[k])-t2) < d-1e-9 {
					t.Fatalf("cuts %v in %d: range %d ends at cut %d (%d), cut %d (%d) is nearer %.1f", cuts, n, i, x[1], cuts[x[1]], k, cuts[k], t2)
				}
			}
		}
	}
}
