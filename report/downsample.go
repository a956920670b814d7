package report

// point is one displayed point of a per-window series: window index and value.
type point struct {
	W int
	V float64
}

// downsample returns the series v (one value per window) reduced to at most
// maxPoints points for display. Short series are returned whole. Longer
// ones are cut into maxPoints/2 buckets of consecutive windows, and each
// bucket contributes its minimum and its maximum (in window order; one
// point when they are the same window), so every peak and trough of the
// full series is still drawn. The first and last windows are always kept.
// It changes only what a chart draws: tables are computed from the full
// results.
func downsample(v []float64, maxPoints int) []point {
	n := len(v)
	if maxPoints < 4 {
		maxPoints = 4
	}
	if n <= maxPoints {
		out := make([]point, n)
		for i, x := range v {
			out[i] = point{i, x}
		}
		return out
	}
	buckets := (maxPoints - 2) / 2
	out := make([]point, 0, maxPoints)
	out = append(out, point{0, v[0]})
	// Buckets cover windows 1..n-2; bucket b is [lo, hi).
	inner := n - 2
	for b := 0; b < buckets; b++ {
		lo := 1 + b*inner/buckets
		hi := 1 + (b+1)*inner/buckets
		if lo >= hi {
			continue
		}
		mi, ma := lo, lo
		for i := lo + 1; i < hi; i++ {
			if v[i] < v[mi] {
				mi = i
			}
			if v[i] > v[ma] {
				ma = i
			}
		}
		first, second := min(mi, ma), max(mi, ma)
		out = append(out, point{first, v[first]})
		if second != first {
			out = append(out, point{second, v[second]})
		}
	}
	out = append(out, point{n - 1, v[n-1]})
	return out
}
