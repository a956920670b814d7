package tune

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/tier"
	"mdk/trace"
)

// Auto's defaults (docs/policies.md, "auto").
const (
	DefaultHistory   = 60     // windows of history a retune looks at
	DefaultEvery     = 5      // windows between retunes
	DefaultMarginPPM = 250000 // 25%: the history must meet 75% of the bound
)

// Auto is mdk's online tuner, a [policy.Controller]: every Every windows,
// and right after a window whose realised promotions broke the bound, it
// computes the exact curve of its base policy's grid on the last History
// windows seen (gaps still open at the present censored) and switches to the
// setting with the most savings there whose statistic meets the SLO's bound
// tightened by the safety margin. It starts from [policy.Nothing]. The rule,
// ties included, is in docs/policies.md ("auto").
type Auto struct {
	Base string          // the base policy: age, paw or pace
	Keys string          // the base policy's keys as written ("P=0..20,wait=2"), "" for its default grid
	Grid []policy.Online // the grid, in grid order
	SLO  SLO
	// History and Every are in windows, both >= 1.
	History, Every int
	// MarginPPM is the safety margin in parts per million of the bound: a
	// setting is eligible when its history statistic is at most
	// bound x (1 - margin).
	MarginPPM int64
	// Curve computes the history curve: every setting of grid on the
	// history trace h, the gaps open at h's end censored. Nil means the
	// one-pass generator (mpc with Censor); tests give the simulator.
	Curve func(ctx context.Context, h *trace.Trace, grid []policy.Setting) ([]*result.Result, error)
}

// IsController reports whether spec names a controller (auto:..., or one
// of the policy package's: gswap, damos, senpai) rather than a policy.
func IsController(spec string) bool {
	return IsAuto(spec) || policy.IsController(spec)
}

// IsAuto reports whether spec names mdk's own controller, auto.
func IsAuto(spec string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return strings.TrimSpace(name) == "auto"
}

// ParseController parses any controller spec for windows of length
// window: auto ([ParseAuto], its SLO's tier set to t) or one of the policy
// package's ([policy.ParseController], given t's promotion cost). t may be
// nil (no tier). L-OPP's model is the caller's to attach to auto's grid.
func ParseController(spec string, window time.Duration, t *tier.Tier) (policy.Controller, error) {
	if IsAuto(spec) {
		a, err := ParseAuto(spec, window)
		if err != nil {
			return nil, err
		}
		if a.SLO.IsTier() {
			if t == nil {
				return nil, fmt.Errorf("%s: its SLO is on the tier model's slowdown: it needs a tier (--tier)", spec)
			}
			a.SLO.Tier = t
		}
		return a, nil
	}
	o := policy.ControllerOptions{Window: window}
	if t != nil {
		o.PromotionNS = t.PromotionNs.Mean
	}
	return policy.ParseController(spec, o)
}

// ControllerGrid returns the fixed settings a controller is compared with
// (mdk tune's "fixed on train" and "in hindsight", docs/tune.md): auto's
// grid, senpai's lru grid ([policy.Senpai.Settings]: the fixed capacities
// its limit moves between); for gswap and damos, the settings they put in
// force are age's, so age's default grid for windows of length window.
func ControllerGrid(c policy.Controller, window time.Duration) []policy.Setting {
	if g, ok := c.(interface{ Settings() []policy.Setting }); ok {
		return g.Settings()
	}
	return policy.DefaultGrid("age", window)
}

// ParseAuto parses a controller spec for a trace whose windows last window:
//
//	auto:BASE[,KEY=VALUE]...
//
// BASE is an online policy (age, paw, pace); its own keys (paw's P
// and wait, say) give the grid as in a policy spec, and without them the
// grid is BASE's default grid. The controller's keys: slo=STAT<=RATE
// (required; any SLO ParseSLO reads, a tier metric needing the caller to
// set SLO.Tier), history=N, every=N (counts of windows or durations),
// margin=RATE (of the bound). Errors are [*policy.SpecError]s.
func ParseAuto(spec string, window time.Duration) (*Auto, error) {
	spec = strings.TrimSpace(spec)
	name, rest, _ := strings.Cut(spec, ":")
	if strings.TrimSpace(name) != "auto" {
		return nil, &policy.SpecError{Part: spec, Msg: "not a controller spec (want auto:BASE,slo=STAT<=RATE,...)"}
	}
	parts := strings.Split(rest, ",")
	base := strings.TrimSpace(parts[0])
	if base == "" {
		return nil, &policy.SpecError{Part: spec, Msg: "want a base policy after auto: (auto:paw,slo=max_pr<=2%)"}
	}
	switch base {
	case "age", "paw", "pace":
	case "vmin", "opp":
		return nil, &policy.SpecError{Part: "auto:" + base, Msg: base + " knows the future: auto needs an online base policy (age, paw, pace)"}
	case "lopp":
		return nil, &policy.SpecError{Part: "auto:" + base, Msg: "auto does not tune lopp yet (its history would need every page's six prior reuse distances): use age, paw or pace"}
	default:
		return nil, &policy.SpecError{Part: "auto:" + base, Msg: fmt.Sprintf("unknown base policy %q (auto takes age, paw, pace)", base)}
	}
	a := &Auto{Base: base, History: DefaultHistory, Every: DefaultEvery, MarginPPM: DefaultMarginPPM}
	var keys []string
	seen := map[string]bool{}
	hasSLO := false
	for _, part := range parts[1:] {
		part = strings.TrimSpace(part)
		where := "auto:" + base + "," + part
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, &policy.SpecError{Part: where, Msg: fmt.Sprintf("want KEY=VALUE, got %q", part)}
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if seen[k] {
			return nil, &policy.SpecError{Part: where, Msg: fmt.Sprintf("duplicate key %q", k)}
		}
		seen[k] = true
		var err error
		switch k {
		case "slo":
			a.SLO, err = ParseSLO(v)
			a.SLO.Window, hasSLO = window, true
		case "history":
			a.History, err = parseWindows(v, window)
		case "every":
			a.Every, err = parseWindows(v, window)
		case "margin":
			a.MarginPPM, err = policy.ParseRate(v)
			if err == nil && a.MarginPPM >= policy.MaxPPM {
				err = fmt.Errorf("margin must be below 100%%")
			}
		default:
			keys = append(keys, k+"="+v) // the base policy's: policy.ParseSpecs judges them
		}
		if err != nil {
			return nil, &policy.SpecError{Part: where, Msg: err.Error()}
		}
	}
	if !hasSLO {
		return nil, &policy.SpecError{Part: spec, Msg: "missing key \"slo\" (auto:" + base + ",slo=max_pr<=2%)"}
	}
	a.Keys = strings.Join(keys, ",")
	bspec := base
	if a.Keys != "" {
		bspec += ":" + a.Keys
	}
	ss, err := policy.ParseSpecs([]string{bspec}, window, policy.SpecOptions{})
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		a.Grid = append(a.Grid, s.(policy.Online))
	}
	return a, nil
}

// parseWindows parses a positive count of windows: an integer or a whole
// number of windows as a duration.
func parseWindows(v string, window time.Duration) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 {
			return 0, fmt.Errorf("want at least 1 window, got %s", v)
		}
		return n, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("bad value %q: want a number of windows or a duration such as 10m", v)
	}
	if d <= 0 || d%window != 0 {
		return 0, fmt.Errorf("%s is not a positive whole number of %s windows", v, trace.FormatDuration(window))
	}
	if d/window > policy.MaxCount {
		return 0, fmt.Errorf("%s is too many windows", v)
	}
	return int(d / window), nil
}

// Policy returns "auto".
func (a *Auto) Policy() string { return "auto" }

// Params returns the spec after "auto:", every key spelled out:
// "paw,slo=max_pr<=2%,history=20,every=5,margin=25%".
func (a *Auto) Params() string {
	s := a.Base
	if a.Keys != "" {
		s += "," + a.Keys
	}
	return s + ",slo=" + a.SLO.String() + ",history=" + strconv.Itoa(a.History) +
		",every=" + strconv.Itoa(a.Every) + ",margin=" + policy.FormatRate(a.MarginPPM)
}

// Settings returns the grid as settings.
func (a *Auto) Settings() []policy.Setting {
	ss := make([]policy.Setting, len(a.Grid))
	for i, s := range a.Grid {
		ss[i] = s
	}
	return ss
}

// Tightened returns the SLO a history must meet: the bound times
// (1 - margin), rounded down to a whole ppm.
func (a *Auto) Tightened() SLO {
	s := a.SLO
	s.PPM -= (s.PPM*a.MarginPPM + policy.MaxPPM - 1) / policy.MaxPPM
	return s
}

// Retune is one retune of an auto run.
type Retune struct {
	Window  int    // at the end of this window
	From    int    // first window of the history; the history is From..Window
	Setting string // the setting chosen (policy.SpecOf)
	Met     bool   // some grid setting met the tightened SLO on the history
	Records int    // event records of the history
	// Broke: the window's realised promotions broke the SLO's bound (the
	// retune may be off the every-E schedule).
	Broke bool
}

// NewRun starts a run of a.
func (a *Auto) NewRun(h trace.Header) policy.ControlRun {
	r := &AutoRun{a: a, h: h, cur: policy.Nothing{}}
	// The pad: a page last touched more than clamp = max(D, Pmax)+1
	// windows before the history's start is in the same state there under
	// every setting as one touched clamp windows before (every finite delay
	// D has passed), and its next touch's prior reuse distance is above
	// Pmax either way; a prior reuse distance above Pmax is eligible under
	// the same settings as Pmax+1.
	for _, s := range a.Grid {
		switch p := s.(type) {
		case policy.AGE:
			r.maxDelay = maxFinite(r.maxDelay, p.A)
		case policy.PAW:
			r.maxDelay, r.maxPrior = maxFinite(r.maxDelay, p.Wait), maxFinite(r.maxPrior, p.P)
		case policy.PACE:
			r.maxDelay, r.maxPrior = maxFinite(r.maxDelay, p.A), maxFinite(r.maxPrior, p.P)
		}
	}
	r.clamp = max(r.maxDelay, r.maxPrior) + 1
	r.pad = r.clamp + r.maxPrior + 1
	return r
}

func maxFinite(m, x int) int {
	if x == policy.Inf {
		return m
	}
	return max(m, x)
}

// AutoRun is one run of [Auto].
type AutoRun struct {
	a   *Auto
	h   trace.Header
	cur policy.Online
	// hist holds the last History windows seen, oldest first from head
	// (a ring); their page IDs are the run's.
	hist []trace.Window
	head int
	// before is every page's life after the windows before the history's
	// first (those that left the ring), by the run's page ID.
	before      []life
	aliveBefore int64 // pages alive in before
	// Retunes lists every retune, in order.
	Retunes []Retune

	maxDelay, maxPrior, clamp, pad int
	ids                            []uint32 // run page ID -> history ID + 1 in the current build (0: none)
	marked                         []uint32 // run page IDs with ids set
}

// life is a page's life as the windows read so far leave it.
type life struct {
	alive       bool
	last, prior int32 // last touch; prior reuse distance at it (-1: infinite)
}

// Start returns [policy.Nothing].
func (r *AutoRun) Start() policy.Online { return policy.Nothing{} }

// EndWindow keeps window w in the history and retunes at the end of every
// Every-th window (w+1 a multiple of Every) and of every window whose
// realised outcome o breaks the SLO's bound (its promotion rate above it,
// or for a tier metric its own slowdown).
func (r *AutoRun) EndWindow(w *trace.Window, o policy.Outcome) (policy.Online, error) {
	r.keep(w)
	broke := r.a.SLO.broken(&result.Result{Promotions: []int64{o.Promotions}, Accessed: []int64{o.Accessed}}, 0)
	if (w.Index+1)%r.a.Every != 0 && !broke {
		return r.cur, nil
	}
	h, untouched := r.history()
	rs, err := r.curve(h)
	if err != nil {
		return nil, err
	}
	n := len(r.hist)
	rs = restrictHistory(rs, r.pad, n, untouched)
	next, met := r.a.choose(rs, r.cur)
	recs := 0
	for i := range r.hist {
		recs += r.hist[i].Records()
	}
	r.Retunes = append(r.Retunes, Retune{Window: w.Index, From: w.Index + 1 - n, Setting: policy.SpecOf(next), Met: met, Records: recs, Broke: broke})
	r.cur = next
	return next, nil
}

// restrictHistory cuts the history trace's runs to its last n windows (the
// pad before them only sets the state at their start) and adds the pages
// alive all through them without an event (untouched): censored, they
// count as alive only.
func restrictHistory(rs []*result.Result, pad, n int, untouched int64) []*result.Result {
	var alive []int64
	out := make([]*result.Result, len(rs))
	for i, r := range rs {
		x := r.Restrict(pad, pad+n)
		if alive == nil {
			alive = make([]int64, n)
			for w := range alive {
				alive[w] = x.AlivePerWindow[w] + untouched
			}
		}
		x.AlivePerWindow = alive
		x.Alive += untouched * int64(n)
		out[i] = x
	}
	return out
}

func (r *AutoRun) curve(h *trace.Trace) ([]*result.Result, error) {
	if r.a.Curve != nil {
		return r.a.Curve(context.Background(), h, r.a.Settings())
	}
	return mpc.Generate(context.Background(), h.NewReader(), r.a.Settings(), mpc.Options{Censor: true})
}

// keep copies w into the history ring; the window it pushes out goes into
// the lives before the history.
func (r *AutoRun) keep(w *trace.Window) {
	if len(r.hist) < r.a.History {
		r.hist = append(r.hist, w.Clone())
		return
	}
	old := &r.hist[r.head]
	r.advance(old)
	old.Index = w.Index
	old.Accessed = append(old.Accessed[:0], w.Accessed...)
	old.Born = append(old.Born[:0], w.Born...)
	old.Freed = append(old.Freed[:0], w.Freed...)
	old.New, old.Unlisted = nil, 0
	r.head = (r.head + 1) % len(r.hist)
}

// advance applies window w to the lives before the history (SPEC section
// 1: an access touches, a birth of a page not alive starts a life, a free
// ends it after the window).
func (r *AutoRun) advance(w *trace.Window) {
	k := int32(w.Index)
	grow := func(id uint32) *life {
		for int(id) >= len(r.before) {
			r.before = append(r.before, life{})
		}
		return &r.before[id]
	}
	for _, id := range w.Accessed {
		l := grow(id)
		if l.alive {
			l.prior = k - l.last
		} else {
			l.alive, l.prior = true, -1
			r.aliveBefore++
		}
		l.last = k
	}
	for _, id := range w.Born {
		if l := grow(id); !l.alive {
			l.alive, l.last, l.prior = true, k, -1
			r.aliveBefore++
		}
	}
	for _, id := range w.Freed {
		if l := grow(id); l.alive {
			l.alive = false
			r.aliveBefore--
		}
	}
}

// history builds the history trace: the n windows of the ring, s..k,
// preceded by pad windows where every page alive at s that has an event in
// the ring gets its last touch (at most clamp windows before s) and,
// if its prior reuse distance is finite, the touch before (at most
// maxPrior+1 windows before that). Every setting's state at s is then the
// one it has after running over every window before s. Pages are
// renumbered in order of first appearance. untouched counts the pages
// alive at s with no event in the ring.
func (r *AutoRun) history() (*trace.Trace, int64) {
	n := len(r.hist)
	s := r.hist[r.head].Index
	base := s - r.pad // real window of the history trace's window 0
	for _, id := range r.marked {
		r.ids[id] = 0
	}
	r.marked = r.marked[:0]
	t := &trace.Trace{Header: trace.Header{PageSize: r.h.PageSize, Window: r.h.Window, Windows: r.pad + n}, Windows: make([]trace.Window, r.pad+n)}
	for i := range t.Windows {
		t.Windows[i].Index = i
	}
	// 1. The pages with an event in the ring, and their state at s.
	var touched int64
	mark := func(id uint32) {
		for int(id) >= len(r.ids) {
			r.ids = append(r.ids, 0)
		}
		if r.ids[id] != 0 {
			return
		}
		r.ids[id] = 1
		r.marked = append(r.marked, id)
		if int(id) >= len(r.before) || !r.before[id].alive {
			return
		}
		touched++
		l := r.before[id]
		last := max(int(l.last), s-r.clamp)
		if l.prior >= 0 {
			prev := last - min(int(l.prior), r.maxPrior+1)
			t.Windows[prev-base].Accessed = append(t.Windows[prev-base].Accessed, id)
		}
		t.Windows[last-base].Accessed = append(t.Windows[last-base].Accessed, id)
	}
	for i := range n {
		src := &r.hist[(r.head+i)%n]
		for _, ids := range [][]uint32{src.Accessed, src.Born, src.Freed} {
			for _, id := range ids {
				mark(id)
			}
		}
	}
	for i := range n {
		src := &r.hist[(r.head+i)%n]
		win := &t.Windows[r.pad+i]
		win.Accessed = append(win.Accessed, src.Accessed...)
		win.Born = append(win.Born, src.Born...)
		win.Freed = append(win.Freed, src.Freed...)
	}
	// 2. Dense IDs in order of first appearance.
	for _, id := range r.marked {
		r.ids[id] = 0
	}
	for i := range t.Windows {
		win := &t.Windows[i]
		for _, ids := range [][]uint32{win.Accessed, win.Born, win.Freed} {
			for j, id := range ids {
				if r.ids[id] == 0 {
					t.Pages = append(t.Pages, trace.Page{Page: uint64(id)})
					r.ids[id] = uint32(len(t.Pages))
					win.New = append(win.New, trace.Page{Page: uint64(id)})
				}
				ids[j] = r.ids[id] - 1
			}
		}
	}
	return t, r.aliveBefore - touched
}

// choose returns the setting of rs's grid with the most saved page-windows
// whose statistic meets the tightened SLO; ties go to the lower statistic,
// then to cur, then to the earlier setting in grid order (default grids
// list the most aggressive first). If none meets it, it returns
// policy.Nothing; met reports whether some setting met it.
func (a *Auto) choose(rs []*result.Result, cur policy.Online) (next policy.Online, met bool) {
	slo := a.Tightened()
	curSpec := policy.SpecOf(cur)
	best := -1
	var bestX float64
	for i, r := range rs {
		x := slo.Value(r)
		if x > slo.Bound() {
			continue
		}
		if best < 0 || r.Saved > rs[best].Saved ||
			r.Saved == rs[best].Saved && (x < bestX ||
				x == bestX && policy.SpecOf(a.Grid[i]) == curSpec && policy.SpecOf(a.Grid[best]) != curSpec) {
			best, bestX = i, x
		}
	}
	if best < 0 {
		return policy.Nothing{}, false
	}
	return a.Grid[best], true
}

var _ policy.Controller = (*Auto)(nil)
