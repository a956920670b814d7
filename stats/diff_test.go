package stats

import (
	"math"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// TestCompareTracesBruteForce compares random traces with sets built
// from page names.
func TestCompareTracesBruteForce(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 41))
	sets := func(tr *trace.Trace, W int) []map[trace.Page]bool {
		out := make([]map[trace.Page]bool, W)
		for w := range out {
			out[w] = map[trace.Page]bool{}
			if w < len(tr.Windows) {
				for _, id := range tr.Windows[w].Accessed {
					out[w][tr.Pages[id]] = true
				}
			}
		}
		return out
	}
	for n := range testutil.Count(300) {
		a, b := testutil.RandomTrace(rng), testutil.RandomTrace(rng)
		if n%3 == 0 {
			b = a
		}
		d, err := CompareTraces(a.NewReader(), b.NewReader())
		if err != nil {
			t.Fatal(err)
		}
		W := max(len(a.Windows), len(b.Windows))
		sa, sb := sets(a, W), sets(b, W)
		pa, pb := map[trace.Page]bool{}, map[trace.Page]bool{}
		var both, acc0, acc1 int64
		for w := range W {
			inter := 0
			for p := range sa[w] {
				pa[p] = true
				if sb[w][p] {
					inter++
				}
			}
			for p := range sb[w] {
				pb[p] = true
			}
			want := 1.0
			if u := len(sa[w]) + len(sb[w]) - inter; u > 0 {
				want = float64(inter) / float64(u)
			}
			if math.Abs(d.Jaccard[w]-want) > 1e-15 {
				t.Fatalf("trace %d window %d: Jaccard %v, want %v", n, w, d.Jaccard[w], want)
			}
			both += int64(inter)
			acc0 += int64(len(sa[w]))
			acc1 += int64(len(sb[w]))
		}
		var common int64
		for p := range pa {
			if pb[p] {
				common++
			}
		}
		if len(d.Jaccard) != W || d.Both != both || d.Accessed != [2]int64{acc0, acc1} ||
			d.Pages != [2]int64{int64(len(pa)), int64(len(pb))} || d.Common != common ||
			d.Windows != [2]int{len(a.Windows), len(b.Windows)} {
			t.Fatalf("trace %d: %+v; want %d windows, both %d, accessed %d %d, pages %d %d, common %d", n, d, W, both, acc0, acc1, len(pa), len(pb), common)
		}
		if n%3 == 0 && (d.Overall() != 1 || d.MinJaccard() != 1) {
			t.Fatalf("trace %d against itself: overall %v, min %v", n, d.Overall(), d.MinJaccard())
		}
	}
}

func TestCompareTracesRefuses(t *testing.T) {
	a := testutil.RandomTrace(testutil.Rand(1))
	b := testutil.RandomTrace(testutil.Rand(2))
	b.Header.PageSize = 8192
	if _, err := CompareTraces(a.NewReader(), b.NewReader()); err == nil {
		t.Error("page sizes 4096 and 8192 compared")
	}
	b.Header.PageSize = a.Header.PageSize
	b.Header.Window *= 2
	if _, err := CompareTraces(a.NewReader(), b.NewReader()); err == nil {
		t.Error("window lengths compared")
	}
}
