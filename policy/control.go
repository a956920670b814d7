package policy

import (
	"slices"
	"strconv"

	"mdk/trace"
)

// Online is a setting whose decision for a gap depends only on the past: it
// names, from the touch alone (LastTouch, Prior and Features of a
// [PageState]; never Idle or Closed), the number of windows after the touch
// at whose end the gap is reclaimed. A fixed Online setting reclaims a
// resident page at the end of window LastTouch+delay, exactly as its
// [Decider] does. Under a [Controller] the setting in force can change while
// a page is idle, and the page is then reclaimed at the first scan point k
// with k-LastTouch >= delay of the setting in force at k (docs/policies.md,
// "Controllers"): a page already idle longer than a lowered delay is
// reclaimed at the next scan point, not stranded, and a reclaimed page is
// absent, so never reclaimed twice in one gap.
type Online interface {
	Setting
	// Due returns the delay after the touch at which the setting reclaims
	// the gap starting at s.LastTouch, and false if it never does.
	Due(s *PageState) (delay int, ok bool)
}

// Due is age's rule: every gap, A windows after the touch.
func (p AGE) Due(*PageState) (int, bool) { return p.A, p.A != Inf }

// Due is paw's rule: a gap whose prior reuse distance d > P, wait windows
// after the touch.
func (p PAW) Due(s *PageState) (int, bool) { return p.Wait, p.P != Inf && s.Prior > p.P }

// Due is pace's rule: right after the touch if d > P, else A windows after.
func (p PACE) Due(s *PageState) (int, bool) {
	if p.P != Inf && s.Prior > p.P {
		return 0, true
	}
	return p.A, p.A != Inf
}

// Due is L-OPP's rule: right after a touch the model scores at least theta.
func (p LOPP) Due(s *PageState) (int, bool) { return 0, p.Score(&s.Features) >= p.Theta }

// Nothing is the setting that reclaims nothing: where a controller starts.
type Nothing struct{}

func (Nothing) Policy() string             { return "none" }
func (Nothing) Params() string             { return "" }
func (Nothing) NewDecider([]int64) Decider { return Nothing{} }
func (Nothing) Reclaim(*PageState) bool    { return false }
func (Nothing) Due(*PageState) (int, bool) { return 0, false }

// SpecOf formats an online setting as a full spec, "paw:P=4,wait=2", and
// Nothing as "none".
func SpecOf(s Online) string {
	if _, ok := s.(Nothing); ok {
		return "none"
	}
	return String(s)
}

// Limited is an [Online] setting that reclaims at most a number of its due
// pages at one scan point: a quota (DAMOS's, docs/policies.md "damos").
// When more pages are due than the limit, the least recently used go first,
// in the one reclaim order of every limit and capacity ([MoreRecent]
// reversed: [Ration]). The simulator's controlled runs and the agent apply
// it alike.
type Limited interface {
	Online
	// Limit returns the most pages reclaimed at this scan point, given
	// resident, the number of resident alive pages there (after the
	// window's accesses and births); ok false means no limit.
	Limit(resident int64) (n int64, ok bool)
}

// Ration returns the pages of due (dense IDs, reordered in place) that a
// limit of n pages reclaims: every one if there are at most n, else the n
// least recent by [MoreRecent], the order a capacity keeps by ([RankLRU]):
// the earliest last touch first; on a tie, the earlier touch before it (the
// larger prior reuse distance; a life's first touch, with none, first); on a
// tie, the larger dense page ID. touch gives a page's last touch and prior
// reuse distance ([PageState]'s LastTouch and Prior). The result is a set, in
// no particular order. It costs O(len(due) + the span of the last touches)
// and a sort of the pages of the one last touch the limit cuts through.
func Ration(due []uint32, touch func(id uint32) (last, prior int), n int64) []uint32 {
	if int64(len(due)) <= n {
		return due
	}
	if n <= 0 {
		return due[:0]
	}
	last := func(id uint32) int { l, _ := touch(id); return l }
	lo, hi := last(due[0]), last(due[0])
	for _, id := range due {
		lo, hi = min(lo, last(id)), max(hi, last(id))
	}
	count := make([]int64, hi-lo+1)
	for _, id := range due {
		count[last(id)-lo]++
	}
	// cut: the last touch the limit cuts through; below it every page goes,
	// at it the least recent up to the limit.
	cut, below := 0, int64(0)
	for below+count[cut] <= n {
		below += count[cut]
		cut++
	}
	kept, tie := 0, []PageState(nil)
	for _, id := range due {
		switch l, p := touch(id); {
		case l-lo < cut:
			due[kept] = id
			kept++
		case l-lo == cut:
			tie = append(tie, PageState{Page: id, LastTouch: l, Prior: p})
		}
	}
	slices.SortFunc(tie, func(a, b PageState) int { return cmpRecency(&b, &a) }) // least recent first
	for _, st := range tie[:n-below] {
		due[kept] = st.Page
		kept++
	}
	return due[:kept]
}

// Quota is an online setting under a quota of Pages pages per scan point:
// Base's due pages, at most Pages of them, the least recently used first
// ([Limited]). It is what damos has in force; as a spec it reads
// "age:A=4,quota=16" (it is not a policy of the spec language).
type Quota struct {
	Base  Online
	Pages int64
}

func (q Quota) Policy() string                     { return q.Base.Policy() }
func (q Quota) Params() string                     { return q.Base.Params() + ",quota=" + strconv.FormatInt(q.Pages, 10) }
func (q Quota) NewDecider(a []int64) Decider       { return q.Base.NewDecider(a) }
func (q Quota) Due(s *PageState) (int, bool)       { return q.Base.Due(s) }
func (q Quota) Limit(resident int64) (int64, bool) { return q.Pages, true }

// Outcome is what one window of a controlled run came to, under the
// decisions the run made so far: what a feedback controller may observe.
type Outcome struct {
	Promotions int64 // promotions_w
	Accessed   int64 // |A_w|
	Saved      int64 // alive pages absent in the window
	Alive      int64 // alive pages
}

// Controller chooses, at the end of each window, the setting that governs
// the decisions from that scan point on, using only the windows seen so far
// (docs/policies.md, "Controllers").
type Controller interface {
	Policy() string // the controller's name: "auto"
	Params() string // the rest of its spec: "paw,slo=max_pr<=2%,history=20,every=5"
	// NewRun starts one run over windows of the given header.
	NewRun(h trace.Header) ControlRun
}

// ControlRun is one run of a controller.
type ControlRun interface {
	// Start is the setting in force before the first window's end.
	Start() Online
	// EndWindow is called at the end of every window w, in order, after
	// w's accesses and births and its counts (o), before w's decisions. It
	// returns the setting in force from this scan point on (the current
	// one to keep it). The window and its lists are valid only during the
	// call. An error stops the run.
	EndWindow(w *trace.Window, o Outcome) (Online, error)
}

// Switch is one change of a controlled run's setting: from the end of
// window Window on, To governs instead of From.
type Switch struct {
	Window int    `json:"window"`
	From   string `json:"from"` // specs (SpecOf)
	To     string `json:"to"`
}

var (
	_ Online  = AGE{}
	_ Online  = PAW{}
	_ Online  = PACE{}
	_ Online  = LOPP{}
	_ Online  = Nothing{}
	_ Limited = Quota{}
)
