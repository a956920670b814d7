package mpc

import (
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
)

// TestExample checks the generator against SPEC section 4's table and
// against the simulator on the worked example, for every edge setting.
func TestExample(t *testing.T) {
	tr := testutil.ReadTextTrace(t, "../testdata/example.txt")
	checkEqual(t, "example.txt", tr, edgeSettings())
	var ss []policy.Setting
	for _, row := range testutil.SpecTable {
		s, err := policy.Parse(row.Spec, tr.Header.Window)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s...)
	}
	checkEqual(t, "example.txt", tr, ss)
	rs, err := Generate(t.Context(), tr.NewReader(), ss, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range testutil.SpecTable {
		r := rs[i]
		if !slices.Equal(r.Promotions, row.Promotions) || r.Saved != row.Saved || r.MaxPR() != row.MaxPR || r.Alive != testutil.SpecAlive {
			t.Errorf("%s: promotions %v, S %d, max_pr %v, L %d; SPEC says %v, %d, %v, %d", row.Spec, r.Promotions, r.Saved, r.MaxPR(), r.Alive, row.Promotions, row.Saved, row.MaxPR, testutil.SpecAlive)
		}
	}
}
