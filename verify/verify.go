// Package verify checks the fast engines against the reference simulator
// on a given trace, and checks the nesting properties of the MDK paper
// empirically: a policy has the eviction-decisions property on a trace when,
// of any two of its settings, the more aggressive one reclaims every gap the
// other reclaims; and the eviction-times property when it also reclaims each
// of them at the same time.
package verify

import (
	"context"
	"fmt"
	"slices"

	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// Diff is one difference between the generator and the simulator.
type Diff struct {
	Setting string
	What    string
}

// Property is what the nesting check found for one policy.
type Property struct {
	Policy    string
	Settings  int
	Decisions bool   // eviction-decisions property holds on this trace
	Times     bool   // eviction-times property holds on this trace
	Witness   string // why a property fails, if one does
}

// Report is the outcome of Run.
type Report struct {
	Settings   int
	Diffs      []Diff
	Properties []Property
}

// Run compares mpc.Generate with sim.Run for every setting on t, and checks
// the nesting properties per policy.
func Run(ctx context.Context, t *trace.Trace, ss []policy.Setting) (*Report, error) {
	fast, err := mpc.Generate(ctx, t.NewReader(), ss, mpc.Options{})
	if err != nil {
		return nil, err
	}
	rep := &Report{Settings: len(ss)}
	type key struct {
		page  uint32
		start int
	}
	reclaimsOf := make([]map[key]int, len(ss))
	for i, s := range ss {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		reclaims := map[key]int{}
		ref := sim.RunObserved(t, s, func(page uint32, start, at int) { reclaims[key{page, start}] = at })
		if d := diff(ref, fast[i]); d != "" {
			rep.Diffs = append(rep.Diffs, Diff{Setting: policy.String(s), What: d})
		}
		reclaimsOf[i] = reclaims
	}
	order, groups := result.ByPolicy(len(ss), func(i int) string { return ss[i].Policy() })
	for _, name := range order {
		sets := make([]map[key]int, len(groups[name]))
		for j, i := range groups[name] {
			sets[j] = reclaimsOf[i]
		}
		// Order the settings by how much they reclaim; nesting must then
		// hold between neighbours.
		slices.SortStableFunc(sets, func(a, b map[key]int) int { return len(a) - len(b) })
		p := Property{Policy: name, Settings: len(sets), Decisions: true, Times: true}
		for k := 1; k < len(sets) && p.Decisions; k++ {
			// Visit gaps in time order so the witness is deterministic.
			keys := make([]key, 0, len(sets[k-1]))
			for g := range sets[k-1] {
				keys = append(keys, g)
			}
			slices.SortFunc(keys, func(a, b key) int {
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
					p.Witness = fmt.Sprintf("page %s's gap after window %d is reclaimed by a less aggressive setting only", t.Pages[g.page], g.start)
					break
				}
				if at2 != at && p.Times {
					p.Times = false
					p.Witness = fmt.Sprintf("page %s's gap after window %d is reclaimed at the end of window %d by one setting and %d by a more aggressive one", t.Pages[g.page], g.start, at, at2)
				}
			}
		}
		rep.Properties = append(rep.Properties, p)
	}
	return rep, nil
}

// diff describes the first differences between two results, or "".
func diff(want, got *result.Result) string {
	var out []string
	add := func(format string, args ...any) {
		if len(out) < 5 {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	if want.Saved != got.Saved {
		add("saved page-windows: sim %d, mpc %d", want.Saved, got.Saved)
	}
	if want.Alive != got.Alive {
		add("alive page-windows: sim %d, mpc %d", want.Alive, got.Alive)
	}
	cmpArr := func(name string, a, b []int64) {
		if len(a) != len(b) {
			add("%s: sim has %d windows, mpc %d", name, len(a), len(b))
			return
		}
		for w := range a {
			if a[w] != b[w] {
				add("%s in window %d: sim %d, mpc %d", name, w, a[w], b[w])
				return
			}
		}
	}
	cmpArr("promotions", want.Promotions, got.Promotions)
	cmpArr("accessed pages", want.Accessed, got.Accessed)
	cmpArr("saved pages", want.SavedPerWindow, got.SavedPerWindow)
	cmpArr("alive pages", want.AlivePerWindow, got.AlivePerWindow)
	if len(out) == 0 {
		return ""
	}
	s := out[0]
	for _, o := range out[1:] {
		s += "; " + o
	}
	return s
}
