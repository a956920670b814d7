package agent

import (
	"mdk/policy"
	"mdk/trace"
)

// Controller is the decide stage's source of decisions. Before each
// window's decisions the agent asks it for the Decider of window k, with the
// window's events, the window's outcome under the model (o: the
// simulator's counts on the observed trace so far, what a
// policy.Controller's EndWindow reads; [Controlled]) and its row as
// measured so far (the guards' readings come later). A fixed setting
// ([FixedSetting]) returns the same Decider every window; a controller
// that changes its setting from window to window (an online tuner reading
// the promotion rate) returns another one. The Decider then sees every
// alive page the model has resident (neither put out nor decided in its
// current gap), in dense-ID order, as the simulator's does.
// An error stops the run.
type Controller interface {
	Decider(k int, win *trace.Window, o policy.Outcome, row *Row) (policy.Decider, error)
}

// fixed is a Controller of one setting for the whole run.
type fixed struct{ dec policy.Decider }

func (f fixed) Decider(int, *trace.Window, policy.Outcome, *Row) (policy.Decider, error) {
	return f.dec, nil
}

// FixedSetting returns the Controller of setting s for the whole run, its
// Decider made once as the simulator makes it: with every window's |A_w|
// when the trace is known in advance (fut, a replay), else with none.
func FixedSetting(s policy.Setting, fut *trace.Trace) Controller {
	var accessed []int64
	if fut != nil {
		accessed = make([]int64, len(fut.Windows))
		for w := range fut.Windows {
			accessed[w] = int64(len(fut.Windows[w].Accessed))
		}
	}
	return fixed{s.NewDecider(accessed)}
}

// decide returns the pages the Controller's Decider chooses at the end of
// window k; the model has them absent from then on (page.absent), whatever
// the guards and the kernel do with them.
func (a *agent) decide(k int, win *trace.Window, row *Row) ([]uint32, error) {
	decided, err := a.decideModel(k, win, row)
	if err != nil {
		return nil, err
	}
	for _, id := range decided {
		a.pages[id].absent = true
	}
	row.Decided = int64(len(decided))
	return decided, nil
}

// outcome is window k's outcome under the model (the simulator's Outcome
// on the observed trace): its accesses of pages the model had absent,
// |A_k|, the alive pages the model has absent and the alive pages.
func (a *agent) outcome(row *Row) policy.Outcome {
	return policy.Outcome{Promotions: a.promoted, Accessed: row.Accessed, Saved: a.absentAlive, Alive: row.Alive}
}

// decideModel is decide's choice, in dense-ID order.
func (a *agent) decideModel(k int, win *trace.Window, row *Row) ([]uint32, error) {
	dec, err := a.ctl.Decider(k, win, a.outcome(row), row)
	if err != nil {
		return nil, err
	}
	a.peak = max(a.peak, row.Alive)
	if c, ok := dec.(policy.Capacity); ok {
		return a.capacity(k, win, c), nil
	}
	var decided []uint32
	var st policy.PageState
	var resident int64
	_, byWindow := dec.(policy.WindowDecider)
	var states []policy.PageState // a WindowDecider's (a rationed lopp's) candidates
	for id := range a.pages {
		p := &a.pages[id]
		if !p.Alive || p.out || p.absent || a.tgts[a.tgt[id]].gone {
			continue
		}
		resident++
		st = policy.PageState{Page: uint32(id), Now: k, LastTouch: p.Last, Prior: p.Prior, Features: p.Features}
		if a.gaps != nil {
			g := a.gaps[id][p.Next]
			st.Idle, st.Closed = int(g.Idle), g.Closed
		}
		if byWindow {
			states = append(states, st)
		} else if dec.Reclaim(&st) {
			decided = append(decided, uint32(id))
		}
	}
	if byWindow {
		// It sees every candidate first; |A_k| is the window's accessed
		// pages as measured so far, as the simulator's of the observed
		// trace.
		reclaim := make([]bool, len(states))
		policy.DecideWindow(dec, row.Accessed, states, reclaim)
		for i := range states {
			if reclaim[i] {
				decided = append(decided, states[i].Page)
			}
		}
	}
	// A controller's limited setting (damos's quota): at most its limit,
	// the least recently used first, as the simulator rations.
	if d, ok := dec.(due); ok {
		if l, ok := d.s.(policy.Limited); ok {
			if n, ok := l.Limit(resident); ok {
				decided = policy.Ration(decided, func(id uint32) (int, int) { return a.pages[id].Last, a.pages[id].Prior }, n)
			}
		}
	}
	return decided, nil
}

// capacity decides for a capacity limit (lru, or the setting a senpai
// controller names; docs/policies.md "lru"), as the simulator does: of the
// alive pages the agent has not put out that outlive window k (not in its
// frees), the limit's most recent by policy.MoreRecent stay, and the others
// are decided, in dense-ID order. A page decided is absent in the model
// until its next touch even if the kernel refused it or a guard kept it (it
// is then no candidate, decide), so the ranking never counts a page the
// model reclaimed, and a refusal's effect is the refused gap's alone.
func (a *agent) capacity(k int, win *trace.Window, c policy.Capacity) []uint32 {
	freed := make(map[uint32]bool, len(win.Freed))
	for _, id := range win.Freed {
		freed[id] = true
	}
	cands := make([]policy.PageState, 0, len(a.pages)) // in dense-ID order
	for id := range a.pages {
		p := &a.pages[id]
		if !p.Alive || p.out || p.absent || a.tgts[a.tgt[id]].gone || len(freed) > 0 && freed[uint32(id)] {
			continue
		}
		cands = append(cands, policy.PageState{Page: uint32(id), Now: k, LastTouch: p.Last, Prior: p.Prior})
	}
	out := policy.RankLRU(cands, c.Limit(a.peak))
	for _, st := range out {
		a.pages[st.Page].absent = true
	}
	// The decided pages in dense-ID order: the candidates now absent.
	decided := make([]uint32, 0, len(out))
	for _, st := range cands {
		if a.pages[st.Page].absent {
			decided = append(decided, st.Page)
		}
	}
	return decided
}
