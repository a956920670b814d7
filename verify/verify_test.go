package verify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/sim"
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

// TestNestingEqualsPairwise checks the streaming nesting check against the
// literal one it replaced: each setting's reclaimed gaps in a map, the
// settings ordered by how many they reclaim, neighbours compared gap by gap
// in time order. Properties and witnesses must be the same, on random traces
// with every policy's default grid, where every kind of break occurs.
func TestNestingEqualsPairwise(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 16))
	var ss []policy.Setting
	for _, name := range []string{"age", "vmin", "opp", "paw", "pace"} {
		ss = append(ss, policy.DefaultGrid(name, trace.DefaultWindow)...)
	}
	seen := map[string]bool{}
	for n := 0; n < testutil.Count(100); n++ {
		tr := testutil.RandomTrace(rng)
		rep, err := Run(context.Background(), tr, ss)
		if err != nil {
			t.Fatal(err)
		}
		want := pairwise(t, tr, ss)
		if !slices.Equal(rep.Properties, want) {
			t.Fatalf("trace %d:\n got %+v\nwant %+v", n, rep.Properties, want)
		}
		for _, p := range want {
			seen[fmt.Sprint(p.Decisions, p.Times)] = true
		}
	}
	for _, k := range []string{"true true", "true false", "false false"} {
		if !seen[k] && !testing.Short() {
			t.Errorf("no policy had decisions/times %s on any trace: the test misses a case", k)
		}
	}
}

// pairwise is the nesting check as mdk verify first did it.
func pairwise(t *testing.T, tr *trace.Trace, ss []policy.Setting) []Property {
	byPolicy := map[string][]mapObserver{}
	var order []string
	for _, s := range ss {
		rec := mapObserver{}
		if _, err := sim.RunAll(context.Background(), tr, []policy.Setting{s}, rec); err != nil {
			t.Fatal(err)
		}
		if _, ok := byPolicy[s.Policy()]; !ok {
			order = append(order, s.Policy())
		}
		byPolicy[s.Policy()] = append(byPolicy[s.Policy()], rec)
	}
	var props []Property
	for _, name := range order {
		sets := byPolicy[name]
		slices.SortStableFunc(sets, func(a, b mapObserver) int { return len(a) - len(b) })
		p := Property{Policy: name, Settings: len(sets), Decisions: true, Times: true}
		for k := 1; k < len(sets) && p.Decisions; k++ {
			keys := slices.SortedFunc(maps.Keys(sets[k-1]), func(a, b gapKey) int {
				if a.start != b.start {
					return a.start - b.start
				}
				return int(a.page) - int(b.page)
			})
			for _, g := range keys {
				at := sets[k-1][g]
				at2, ok := sets[k][g]
				if !ok {
					p.Decisions, p.Times = false, false
					p.Witness = fmt.Sprintf("page %s's gap after window %d is reclaimed by a less aggressive setting only", tr.Pages[g.page], g.start)
					break
				}
				if at2 != at && p.Times {
					p.Times = false
					p.Witness = fmt.Sprintf("page %s's gap after window %d is reclaimed at the end of window %d by one setting and %d by a more aggressive one", tr.Pages[g.page], g.start, at, at2)
				}
			}
		}
		props = append(props, p)
	}
	return props
}

// gapKey names a gap: its page and the window of the touch it starts at.
type gapKey struct {
	page  uint32
	start int
}

// mapObserver keeps one setting's reclaim time of every gap it reclaims.
type mapObserver map[gapKey]int

func (o mapObserver) Reclaimed(_ int, page uint32, start, at int) { o[gapKey{page, start}] = at }
func (o mapObserver) GapEnded(uint32, int)                        {}
