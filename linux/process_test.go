package linux

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRuns(t *testing.T) {
	got := Runs(nil, []uint64{9, 3, 4, 5, 5, 7, 10, 11, 1})
	want := []Run{{1, 1}, {3, 3}, {7, 1}, {9, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Runs (-want +got):\n%s", diff)
	}
	if got := Runs(got, nil); len(got) != 0 {
		t.Errorf("Runs of nothing: %v", got)
	}
}

// TestProbeCached: a feature probe answers the same every time, and an
// unknown feature is not supported.
func TestProbeCached(t *testing.T) {
	for f := range numFeatures {
		a, b := Probe(f), Probe(f)
		if (a == nil) != (b == nil) {
			t.Errorf("%v: %v then %v", f, a, b)
		}
	}
	if err := Probe(numFeatures); err == nil {
		t.Error("an unknown feature probed as supported")
	}
}
