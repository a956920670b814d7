package trace_test

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"slices"
	"testing"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/trace"
)

// countingReader counts the bytes read through it; it seeks like the
// bytes.Reader under it, so a reader can skip what it does not need.
type countingReader struct {
	*bytes.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.n += int64(n)
	return n, err
}

// rangeWindows reads partitions lo .. hi-1 of data one by one through a
// reader told SelectPartitionRange(lo, hi), and returns their windows (by
// partition - lo) and the bytes read.
func rangeWindows(t *testing.T, data []byte, lo, hi int) ([][]trace.Window, int64) {
	t.Helper()
	cr := &countingReader{Reader: bytes.NewReader(data)}
	r, err := trace.NewReaderAuto(cr, "p.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	pr := r.(trace.PartitionedReader)
	pr.SelectPartitionRange(lo, hi)
	if pr.Selected() != hi-lo {
		t.Fatalf("partitions %d..%d: Selected %d", lo, hi-1, pr.Selected())
	}
	out := make([][]trace.Window, hi-lo)
	for {
		_, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			return out, cr.n
		}
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			for p := lo; p < hi; p++ {
				var w trace.Window
				if err := pr.PartitionWindow(p, &w, false); err != nil {
					t.Fatal(err)
				}
				out[p-lo] = append(out[p-lo], w)
			}
		}
		if lo > 0 {
			if err := pr.PartitionWindow(lo-1, new(trace.Window), false); err == nil {
				t.Fatalf("partition %d read outside the range %d..%d", lo-1, lo, hi-1)
			}
		}
	}
}

// TestPartitionRange: a reader told to read a range of partitions gives
// each of them as the reader of every partition does, reads fewer bytes
// when the range is not all of them, and its merged windows hold exactly
// the range's pages, on both partitioned versions.
func TestPartitionRange(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 11))
	for i := range testutil.Count(60) {
		tr := binRandom(rng)
		P := []int{1, 4, 16, 64}[i%4]
		data := encodePartsV(t, tr, P, uint64(i), partVersions[i%2])
		all := partWindows(t, data, false)
		_, whole := rangeWindows(t, data, 0, P)
		lo := rng.IntN(P)
		hi := lo + 1 + rng.IntN(P-lo)
		got, n := rangeWindows(t, data, lo, hi)
		for p := lo; p < hi; p++ {
			if k := windowsDiffer(got[p-lo], all[p]); k >= 0 {
				t.Fatalf("trace %d, partitions %d..%d of %d: partition %d's window %d differs from the whole reader's", i, lo, hi-1, P, p, k)
			}
		}
		if n > whole {
			t.Errorf("trace %d: partitions %d..%d of %d read %d bytes, more than all %d", i, lo, hi-1, P, n, whole)
		}
		// The merged windows: the range's pages, each once.
		var want []trace.Page
		for p := lo; p < hi; p++ {
			for _, w := range all[p] {
				want = append(want, w.New...)
			}
		}
		r, err := trace.NewBinaryReader(bytes.NewReader(data), "p.mdkt")
		if err != nil {
			t.Fatal(err)
		}
		r.(trace.PartitionedReader).SelectPartitionRange(lo, hi)
		m, err := trace.ReadAll(r)
		if err != nil {
			t.Fatalf("trace %d, partitions %d..%d of %d merged: %v", i, lo, hi-1, P, err)
		}
		slices.SortFunc(want, pageCmp)
		gotPages := slices.SortedFunc(slices.Values(m.Pages), pageCmp)
		if !slices.Equal(gotPages, want) {
			t.Fatalf("trace %d, partitions %d..%d of %d merged: %d pages, want the range's %d", i, lo, hi-1, P, len(gotPages), len(want))
		}
	}
}

// TestPartitionRangeReadsLess: on the README's trace, a quarter of its 64
// partitions reads well under half its bytes (the reader's read-ahead
// buffer included).
func TestPartitionRangeReadsLess(t *testing.T) {
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Seed = "mix", 7
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	data := encodeParts(t, tr, 64, 1)
	_, all := rangeWindows(t, data, 0, 64)
	_, quarter := rangeWindows(t, data, 16, 32)
	t.Logf("partitions 16..31 of 64: %d of %d bytes (%.1f%%)", quarter, all, 100*float64(quarter)/float64(all))
	if quarter*2 > all {
		t.Errorf("partitions 16..31 of 64 read %d bytes of the %d all of them read", quarter, all)
	}
}

func pageCmp(a, b trace.Page) int {
	if c := cmp.Compare(a.Space, b.Space); c != 0 {
		return c
	}
	return cmp.Compare(a.Page, b.Page)
}
