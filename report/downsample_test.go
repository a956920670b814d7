package report

import (
	"slices"
	"testing"

	"mdk/internal/testutil"
)

func TestDownsample(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 1))
	for i := 0; i < 500; i++ {
		n := rng.IntN(5000)
		maxPoints := 4 + rng.IntN(300)
		v := make([]float64, n)
		for k := range v {
			v[k] = float64(rng.IntN(1000))
			if rng.IntN(200) == 0 {
				v[k] = 1e6 // a spike that must survive
			}
		}
		got := downsample(v, maxPoints)
		if n <= maxPoints {
			if len(got) != n {
				t.Fatalf("n=%d max=%d: %d points, want the whole series", n, maxPoints, len(got))
			}
		} else if len(got) > maxPoints {
			t.Fatalf("n=%d max=%d: %d points", n, maxPoints, len(got))
		}
		if n == 0 {
			continue
		}
		for k, p := range got {
			if p.V != v[p.W] {
				t.Fatalf("point %d: window %d value %v, series has %v", k, p.W, p.V, v[p.W])
			}
			if k > 0 && p.W <= got[k-1].W {
				t.Fatalf("windows not increasing at point %d: %d after %d", k, p.W, got[k-1].W)
			}
		}
		if got[0].W != 0 || got[len(got)-1].W != n-1 {
			t.Fatalf("first/last window %d/%d, want 0/%d", got[0].W, got[len(got)-1].W, n-1)
		}
		gmax := slices.MaxFunc(got, func(a, b point) int { return cmpF(a.V, b.V) }).V
		gmin := slices.MinFunc(got, func(a, b point) int { return cmpF(a.V, b.V) }).V
		if gmax != slices.Max(v) || gmin != slices.Min(v) {
			t.Fatalf("n=%d max=%d: shown range [%v, %v], series range [%v, %v]", n, maxPoints, gmin, gmax, slices.Min(v), slices.Max(v))
		}
		// Every spike is kept: a bucket's max is one of its points.
		for w, x := range v {
			if x == 1e6 && !slices.ContainsFunc(got, func(p point) bool { return p.V == 1e6 && nearBucket(p.W, w, n, maxPoints) }) {
				t.Fatalf("spike at window %d lost", w)
			}
		}
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nearBucket reports whether windows a and b are within one bucket's width.
func nearBucket(a, b, n, maxPoints int) bool {
	width := n/max(1, (maxPoints-2)/2) + 1
	return a-b <= width && b-a <= width
}
