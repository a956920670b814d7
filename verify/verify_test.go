package verify

import (
	"context"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

func grid() []policy.Setting {
	var ss []policy.Setting
	for a := 0; a <= 6; a++ {
		ss = append(ss, policy.AGE{A: a}, policy.VMIN{T: a})
	}
	for _, r := range []int64{0, 100000, 250000, 500000, 1000000} {
		ss = append(ss, policy.OPP{PPM: r})
	}
	return ss
}

// TestProperties checks the paper's claim on random traces: vmin and opp
// have both nesting properties; age has eviction decisions only.
func TestProperties(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 6))
	ageTimesFails := false
	for n := 0; n < testutil.Count(300); n++ {
		rep, err := Run(context.Background(), testutil.RandomTrace(rng), grid())
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Diffs) > 0 {
			t.Fatalf("trace %d: engines differ: %+v", n, rep.Diffs)
		}
		for _, p := range rep.Properties {
			switch p.Policy {
			case "vmin", "opp":
				if !p.Decisions || !p.Times {
					t.Fatalf("trace %d: %s lacks a property: %+v", n, p.Policy, p)
				}
			case "age":
				if !p.Decisions {
					t.Fatalf("trace %d: age lacks eviction decisions: %+v", n, p)
				}
				ageTimesFails = ageTimesFails || !p.Times
			}
		}
	}
	if !ageTimesFails {
		t.Error("age had the eviction-times property on every trace; the check cannot see the difference")
	}
}

// TestDetectsDifference feeds verify a setting whose generator disagrees
// with its simulator and expects a reported difference.
func TestDetectsDifference(t *testing.T) {
	b := trace.NewBuilder(trace.Header{PageSize: 4096, Window: trace.DefaultWindow, Windows: 5})
	b.Add(0, trace.Access, trace.Page{Page: 1})
	b.Add(3, trace.Access, trace.Page{Page: 1})
	rep, err := Run(context.Background(), b.Trace(), []policy.Setting{lying{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Diffs) != 1 {
		t.Fatalf("want one difference, got %+v", rep.Diffs)
	}
}

// lying reclaims right after every touch in the simulator, but tells the
// generator it never reclaims anything.
type lying struct{ policy.VMIN }

func (lying) Policy() string                      { return "lying" }
func (lying) Reclaim(s *policy.PageState) bool    { return s.Now == s.LastTouch }
func (l lying) NewDecider([]int64) policy.Decider { return l }
func (lying) Critical(trace.Gap) float64          { return policy.Never }
