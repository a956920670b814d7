package lopp

import (
	"errors"
	"testing"
	"time"

	"mdk/gbdt"
	"mdk/internal/testutil"
	"mdk/trace"
)

// TestTrainIsDatasetAndGBDT: Train's model and counts are those of the
// steps it stands for (Dataset, Labelled, gbdt.Train, the accuracy
// counted row by row), on random traces and spans.
func TestTrainIsDatasetAndGBDT(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 5))
	cfg := gbdt.DefaultConfig
	cfg.Rounds, cfg.MaxDepth = 5, 3
	for i := range testutil.Count(40) {
		tr := testutil.RandomTrace(rng)
		span := Span{From: rng.IntN(len(tr.Windows)), To: len(tr.Windows)}
		span.To = span.From + 1 + rng.IntN(span.To-span.From)
		ppm := int64(rng.IntN(1_000_001))
		got, err := Train(tr.NewReader(), ppm, span, cfg)
		d, derr := Dataset(tr.NewReader(), ppm, span)
		if derr != nil {
			t.Fatal(derr)
		}
		x, y := d.Labelled()
		if len(y) == 0 {
			if !errors.Is(err, ErrNoLabels) {
				t.Fatalf("trace %d span %v: no labelled row, Train says %v, want ErrNoLabels", i, span, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("trace %d span %v: %v", i, span, err)
		}
		m, err := gbdt.Train(x, NumFeatures, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		pos, right := 0, 0
		for k, v := range y {
			row := x[k*NumFeatures : (k+1)*NumFeatures]
			if s, ws := got.Model.Score(row), m.Score(row); s != ws {
				t.Fatalf("trace %d span %v row %d: score %v, gbdt.Train's %v", i, span, k, s, ws)
			}
			if v {
				pos++
			}
			if (m.Score(row) >= 0.5) == v {
				right++
			}
		}
		if got.Rows != len(y) || got.Positives != pos || got.Censored != d.NumCensored() || got.Right != right {
			t.Fatalf("trace %d span %v: rows %d positives %d censored %d right %d, want %d %d %d %d",
				i, span, got.Rows, got.Positives, got.Censored, got.Right, len(y), pos, d.NumCensored(), right)
		}
		if a := got.Accuracy(); a != float64(right)/float64(len(y)) {
			t.Fatalf("trace %d: accuracy %v", i, a)
		}
	}
}

// TestTrainNoLabels: fit windows whose every gap is still open at their
// end (one window: every touch's next touch lies beyond it) give
// ErrNoLabels, not a model of nothing.
func TestTrainNoLabels(t *testing.T) {
	b := trace.NewBuilder(trace.Header{Window: time.Second})
	for w := range 2 {
		b.Add(w, trace.Access, trace.Page{Page: 1}, trace.Page{Page: 2})
	}
	tr := b.Trace()
	if _, err := Train(tr.NewReader(), 20000, Span{0, 1}, gbdt.DefaultConfig); !errors.Is(err, ErrNoLabels) {
		t.Fatalf("Train on one window: %v, want ErrNoLabels", err)
	}
}
