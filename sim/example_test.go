package sim

import (
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
)

func TestSpecExample(t *testing.T) {
	tr := testutil.ReadTextTrace(t, "../testdata/example.txt")
	for _, row := range testutil.SpecTable {
		ss, err := policy.Parse(row.Spec, tr.Header.Window)
		if err != nil || len(ss) != 1 {
			t.Fatalf("%s: %v %v", row.Spec, ss, err)
		}
		for name, r := range map[string]*result.Result{"sim": Run(tr, ss[0]), "closed form": cfRun(tr, ss[0])} {
			if !slices.Equal(r.Accessed, testutil.SpecAccessed) || r.Alive != testutil.SpecAlive {
				t.Errorf("%s %s: |A_w| = %v, L = %d; SPEC says %v and %d", name, row.Spec, r.Accessed, r.Alive, testutil.SpecAccessed, testutil.SpecAlive)
			}
			var total int64
			for _, p := range row.Promotions {
				total += p
			}
			if !slices.Equal(r.Promotions, row.Promotions) || r.Saved != row.Saved || r.MaxPR() != row.MaxPR || r.TotalPromotions() != total {
				t.Errorf("%s %s: promotions %v (%d), max_pr %v, S %d; SPEC says %v (%d), %v, %d",
					name, row.Spec, r.Promotions, r.TotalPromotions(), r.MaxPR(), r.Saved, row.Promotions, total, row.MaxPR, row.Saved)
			}
		}
	}
}
