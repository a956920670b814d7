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

// Run compares mpc.Generate with sim.RunAll for every setting on t, and
// checks the nesting properties per policy. The simulator runs every setting
// side by side in one pass, and the nesting check looks at each gap once,
// when it ends: memory beyond the trace and its gaps is a few bytes per page
// and setting, whatever the trace's length.
func Run(ctx context.Context, t *trace.Trace, ss []policy.Setting) (*Report, error) {
	return RunProgress(ctx, t, ss, nil)
}

// RunProgress is Run, calling progress (if not nil) after every window of
// each of its two passes: stage "generator" (mpc.Generate), then
// "simulator" (sim.RunAll).
func RunProgress(ctx context.Context, t *trace.Trace, ss []policy.Setting, progress func(stage string, done, total int)) (*Report, error) {
	var opts mpc.Options
	if progress != nil {
		opts.Progress = func(done, total int) { progress("generator", done, total) }
	}
	fast, err := mpc.Generate(ctx, t.NewReader(), ss, opts)
	if err != nil {
		return nil, err
	}
	var obs sim.Observer = newNesting(ss, len(t.Pages))
	n := obs.(*nesting)
	if progress != nil {
		obs = progressNesting{n, progress}
	}
	ref, err := sim.RunAll(ctx, t, ss, obs)
	if err != nil {
		return nil, err
	}
	rep := &Report{Settings: len(ss)}
	for i, s := range ss {
		if d := diff(ref[i], fast[i]); d != "" {
			rep.Diffs = append(rep.Diffs, Diff{Setting: policy.String(s), What: d})
		}
	}
	for _, g := range n.groups {
		// Order the settings by how much they reclaim; nesting must then
		// hold between neighbours.
		order := make([]int, len(g.settings))
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int { return g.count[a] - g.count[b] })
		p := Property{Policy: ss[g.settings[0]].Policy(), Settings: len(g.settings), Decisions: true, Times: true}
		timesPair := -1
		for k := 1; k < len(order) && p.Decisions; k++ {
			a, b := order[k-1], order[k]
			if g.notIn[a].has(b) {
				p.Decisions, p.Times = false, false
				p.Witness, err = witness(ctx, t, ss[g.settings[a]], ss[g.settings[b]], false)
				if err != nil {
					return nil, err
				}
			} else if g.timeDiffers[a].has(b) && timesPair < 0 {
				timesPair = k
			}
		}
		if p.Decisions && timesPair > 0 {
			a, b := order[timesPair-1], order[timesPair]
			p.Times = false
			p.Witness, err = witness(ctx, t, ss[g.settings[a]], ss[g.settings[b]], true)
			if err != nil {
				return nil, err
			}
		}
		rep.Properties = append(rep.Properties, p)
	}
	return rep, nil
}

// progressNesting is the nesting observer telling progress of every
// window the simulator ends.
type progressNesting struct {
	*nesting
	progress func(stage string, done, total int)
}

func (p progressNesting) WindowDone(k, windows int) { p.progress("simulator", k+1, windows) }

// bits is a set of small integers.
type bits []uint64

func newBits(n int) bits      { return make(bits, (n+63)/64) }
func (b bits) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bits) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func (b bits) clear()         { clear(b) }
func (b bits) orNot(x, y bits) { // b |= x &^ y
	for w := range b {
		b[w] |= x[w] &^ y[w]
	}
}

// group is one policy's settings, and what the nesting check learned about
// each ordered pair of them.
type group struct {
	settings    []int  // indices into Run's settings
	count       []int  // gaps each setting reclaims
	notIn       []bits // notIn[a] has b: a gap a reclaims, b does not
	timeDiffers []bits // timeDiffers[a] has b: a gap both reclaim at different times
	all         bits   // every setting of the group
	m, same     bits   // scratch: who reclaims the gap; who at the same time
}

// reclaim is one setting's reclaim of a page's current gap.
type reclaim struct {
	setting int32 // index into Run's settings
	at      int32
}

// nesting is a sim.Observer: it keeps each page's reclaims of its current
// gap and folds them into the groups when the gap ends.
type nesting struct {
	groups  []*group
	groupOf []int // per setting: its group
	local   []int // per setting: its index in its group
	current [][]reclaim
}

func newNesting(ss []policy.Setting, pages int) *nesting {
	n := &nesting{groupOf: make([]int, len(ss)), local: make([]int, len(ss)), current: make([][]reclaim, pages)}
	names, byName := result.ByPolicy(len(ss), func(i int) string { return ss[i].Policy() })
	for gi, name := range names {
		g := &group{settings: byName[name]}
		k := len(g.settings)
		for j, i := range g.settings {
			n.groupOf[i], n.local[i] = gi, j
		}
		g.count = make([]int, k)
		g.all, g.m, g.same = newBits(k), newBits(k), newBits(k)
		for j := range k {
			g.all.set(j)
			g.notIn = append(g.notIn, newBits(k))
			g.timeDiffers = append(g.timeDiffers, newBits(k))
		}
		n.groups = append(n.groups, g)
	}
	return n
}

func (n *nesting) Reclaimed(i int, page uint32, start, at int) {
	n.current[page] = append(n.current[page], reclaim{int32(i), int32(at)})
}

// GapEnded folds the gap's reclaims into the groups. The reclaims arrive
// in time order; a stable sort by group keeps that order inside a group.
func (n *nesting) GapEnded(page uint32, start int) {
	rs := n.current[page]
	slices.SortStableFunc(rs, func(a, b reclaim) int { return n.groupOf[a.setting] - n.groupOf[b.setting] })
	for lo := 0; lo < len(rs); {
		g := n.groups[n.groupOf[rs[lo].setting]]
		hi := lo
		g.m.clear()
		for hi < len(rs) && n.groupOf[rs[hi].setting] == n.groupOf[rs[lo].setting] {
			g.m.set(n.local[rs[hi].setting])
			hi++
		}
		// Runs of equal reclaim times, in time order.
		for a := lo; a < hi; {
			b := a
			g.same.clear()
			for b < hi && rs[b].at == rs[a].at {
				g.same.set(n.local[rs[b].setting])
				b++
			}
			for _, r := range rs[a:b] {
				j := n.local[r.setting]
				g.count[j]++
				g.notIn[j].orNot(g.all, g.m)
				g.timeDiffers[j].orNot(g.m, g.same)
			}
			a = b
		}
		lo = hi
	}
	n.current[page] = rs[:0]
}

// witness reruns the simulator on settings a and b only (a reclaims no more
// gaps than b) and describes the first gap, in time order, that breaks
// their nesting: one a reclaims and b does not, or with times, one both
// reclaim at different times.
func witness(ctx context.Context, t *trace.Trace, a, b policy.Setting, times bool) (string, error) {
	w := &pairWitness{at: [2][]int{make([]int, len(t.Pages)), make([]int, len(t.Pages))}, times: times}
	for i := range w.at {
		for p := range w.at[i] {
			w.at[i][p] = -1
		}
	}
	if _, err := sim.RunAll(ctx, t, []policy.Setting{a, b}, w); err != nil {
		return "", err
	}
	if !w.found {
		panic("verify: the nesting check saw a break the witness pass did not")
	}
	if !times {
		return fmt.Sprintf("page %s's gap after window %d is reclaimed by a less aggressive setting only", t.Pages[w.page], w.start), nil
	}
	return fmt.Sprintf("page %s's gap after window %d is reclaimed at the end of window %d by one setting and %d by a more aggressive one", t.Pages[w.page], w.start, w.atA, w.atB), nil
}

// pairWitness is a sim.Observer for two settings that keeps the first
// breaking gap by (start, page).
type pairWitness struct {
	at              [2][]int // per setting, per page: when the current gap was reclaimed, or -1
	times           bool
	found           bool
	page            uint32
	start, atA, atB int
}

func (w *pairWitness) Reclaimed(i int, page uint32, start, at int) { w.at[i][page] = at }

func (w *pairWitness) GapEnded(page uint32, start int) {
	a, b := w.at[0][page], w.at[1][page]
	w.at[0][page], w.at[1][page] = -1, -1
	breaks := a >= 0 && b < 0
	if w.times {
		breaks = a >= 0 && b >= 0 && a != b
	}
	if !breaks || (w.found && (start > w.start || start == w.start && page > w.page)) {
		return
	}
	w.found, w.page, w.start, w.atA, w.atB = true, page, start, a, b
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
