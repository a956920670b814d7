package tune

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/tier"
	"mdk/trace"
)

// naiveCurve is the history curve by brute force: every setting simulated
// with sim.Run on the whole trace up to window k (what the controller has
// seen), restricted to the history's windows from..k, and each gap still
// open at the end of k that the setting reclaimed taken out of its savings
// there (censored: a page alive at the end of k whose last touch started
// the gap saves nothing).
func naiveCurve(t *trace.Trace, from, k int, grid []policy.Setting) []*result.Result {
	seen := &trace.Trace{Header: t.Header, Pages: t.Pages, Windows: t.Windows[:k+1]}
	seen.Header.Windows = k + 1
	alive := map[uint32]bool{}
	last := map[uint32]int{}
	for w := range seen.Windows {
		win := &seen.Windows[w]
		for _, id := range win.Accessed {
			alive[id], last[id] = true, w
		}
		for _, id := range win.Born {
			if !alive[id] {
				alive[id], last[id] = true, w
			}
		}
		for _, id := range win.Freed {
			delete(alive, id)
		}
	}
	var out []*result.Result
	for _, s := range grid {
		var cens [][2]int // (page, reclaimed at) of censored gaps
		r := sim.RunObserved(seen, s, func(page uint32, start, at int) {
			if alive[page] && last[page] == start {
				cens = append(cens, [2]int{int(page), at})
			}
		})
		for _, c := range cens {
			for w := max(c[1]+1, from); w <= k; w++ {
				r.SavedPerWindow[w]--
			}
		}
		out = append(out, r.Restrict(from, k+1))
	}
	return out
}

// naiveChoose is the retune rule written out again: the most saved
// page-windows meeting bound x (1 - margin) (floor in ppm), ties to the
// lower statistic, then to the setting in force, then to the earlier one;
// none meeting it: reclaim nothing.
func naiveChoose(a *Auto, rs []*result.Result, cur string) string {
	ppm := a.SLO.PPM * (policy.MaxPPM - a.MarginPPM) / policy.MaxPPM
	slo := a.SLO
	slo.PPM = ppm
	type cand struct {
		saved int64
		x     float64
		cur   bool
		i     int
	}
	var cs []cand
	for i, r := range rs {
		if x := slo.Value(r); x <= float64(ppm)/1e6 {
			cs = append(cs, cand{r.Saved, x, policy.String(a.Grid[i]) == cur, i})
		}
	}
	if len(cs) == 0 {
		return "none"
	}
	slices.SortStableFunc(cs, func(p, q cand) int {
		switch {
		case p.saved != q.saved:
			return cmp.Compare(q.saved, p.saved)
		case p.x != q.x:
			if p.x < q.x {
				return -1
			}
			return 1
		case p.cur != q.cur:
			if p.cur {
				return -1
			}
			return 1
		}
		return p.i - q.i
	})
	return policy.String(a.Grid[cs[0].i])
}

// genTrace reads a small trace of a gen model into memory.
func genTrace(t testing.TB, model string, pages, windows int, seed uint64) *trace.Trace {
	t.Helper()
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, pages, windows, seed
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// naiveRun is the controlled run written out literally, page by page with
// maps: the settings chosen by naive retunes, each window's decisions by
// "due" under the setting in force (k - last touch >= its delay).
func naiveRun(t *trace.Trace, a *Auto) (*result.Result, []string) {
	W := len(t.Windows)
	r := &result.Result{Policy: "auto", Params: a.Params(), PageSize: int64(t.Header.PageSize),
		Promotions: make([]int64, W), Accessed: make([]int64, W), SavedPerWindow: make([]int64, W), AlivePerWindow: make([]int64, W)}
	bySpec := map[string]policy.Online{"none": policy.Nothing{}}
	for _, s := range a.Grid {
		bySpec[policy.String(s)] = s
	}
	type life struct {
		last, prior int
		f           policy.Features
		absent      bool
	}
	lives := map[uint32]*life{}
	cur := "none"
	settings := make([]string, 0, W)
	for k := range W {
		win := &t.Windows[k]
		acc := map[uint32]bool{}
		for _, id := range win.Accessed {
			acc[id] = true
			r.Accessed[k]++
			if l := lives[id]; l != nil {
				if l.absent {
					r.Promotions[k]++
				}
				l.prior, l.last, l.absent = k-l.last, k, false
				l.f = l.f.Next(l.prior)
			} else {
				l := &life{last: k, prior: trace.Inf}
				l.f = l.f.Next(trace.Inf)
				lives[id] = l
			}
		}
		for _, id := range win.Born {
			if lives[id] == nil && !acc[id] {
				l := &life{last: k, prior: trace.Inf}
				l.f = l.f.Next(trace.Inf)
				lives[id] = l
			}
		}
		for _, l := range lives {
			r.AlivePerWindow[k]++
			if l.absent {
				r.SavedPerWindow[k]++
			}
		}
		one := &result.Result{Promotions: r.Promotions[k : k+1], Accessed: r.Accessed[k : k+1]}
		if (k+1)%a.Every == 0 || a.SLO.BrokenWindows(one) == 1 {
			from := max(0, k-a.History+1)
			rs := naiveCurve(t, from, k, a.Settings())
			cur = naiveChoose(a, rs, cur)
		}
		settings = append(settings, cur)
		s := bySpec[cur]
		for id, l := range lives {
			st := policy.PageState{Page: id, Now: k, LastTouch: l.last, Prior: l.prior, Features: l.f}
			if d, ok := s.Due(&st); ok && !l.absent && k-l.last >= d {
				l.absent = true
			}
		}
		for _, id := range win.Freed {
			delete(lives, id)
		}
	}
	for k := range W {
		r.Saved += r.SavedPerWindow[k]
		r.Alive += r.AlivePerWindow[k]
	}
	return r, settings
}

func mustAuto(t testing.TB, spec string, window time.Duration) *Auto {
	t.Helper()
	a, err := ParseAuto(spec, window)
	if err != nil {
		t.Fatalf("%s: %v", spec, err)
	}
	return a
}

// checkAuto runs a in sim (the one-pass generator retuning) and naively,
// and compares every per-window array and the setting of every window.
func checkAuto(t *testing.T, name string, tr *trace.Trace, a *Auto) int {
	t.Helper()
	got, err := sim.RunControlled(context.Background(), tr, a)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, wantSettings := naiveRun(tr, a)
	if d := gocmp.Diff(want, got.Result); d != "" {
		t.Fatalf("%s: %s: naive and sim differ (-naive +sim):\n%s", name, a.Params(), d)
	}
	if d := gocmp.Diff(wantSettings, got.Settings); d != "" {
		t.Fatalf("%s: %s: settings differ (-naive +sim):\n%s", name, a.Params(), d)
	}
	for i, sw := range got.Switches {
		if sw.From == sw.To || (i > 0 && sw.Window <= got.Switches[i-1].Window) || got.Settings[sw.Window] != sw.To {
			t.Fatalf("%s: bad switch %d %+v", name, i, sw)
		}
	}
	return len(got.Switches)
}

// randomAuto returns an auto spec with a random base, grid, SLO, history,
// period and margin.
func randomAuto(rng *rand.Rand) string {
	bases := []string{
		"age", "age,A=0..6", "age,A=1|3|inf", "age,A=2|5",
		"paw,P=0..5,wait=0|1|2", "paw", "paw,P=1|inf,wait=3",
		"pace,P=0|2|inf,A=0|1|3", "pace", "pace,P=1|3,A=2|inf", "paw,P=2|4,wait=1|3",
	}
	stats := []string{"max_pr", "p99_pr", "p98_pr", "mean_pr"}
	rates := []string{"0%", "10%", "25%", "50%", "100%"}
	s := "auto:" + bases[rng.IntN(len(bases))] +
		",slo=" + stats[rng.IntN(len(stats))] + "<=" + rates[rng.IntN(len(rates))] +
		fmt.Sprintf(",history=%d,every=%d", 1+rng.IntN(8), 1+rng.IntN(5))
	if rng.IntN(2) == 0 {
		s += ",margin=" + rates[rng.IntN(len(rates)-1)]
	}
	return s
}

// TestAutoEqualsNaive is the brute force of issue 22: the controller in sim,
// retuning with the one-pass generator on a history built by the run,
// equals a naive controller that at every retune builds the history trace
// from scratch, simulates every grid setting on it with sim, censors by
// hand, chooses by the rule written out again, and applies the choices
// page by page.
func TestAutoEqualsNaive(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 22))
	switches := 0
	for n := range testutil.Count(250) {
		tr := testutil.RandomTrace(rng)
		spec := randomAuto(rng)
		switches += checkAuto(t, fmt.Sprintf("trace %d", n), tr, mustAuto(t, spec, tr.Header.Window))
	}
	if switches == 0 {
		t.Fatal("no controller ever switched: the test exercises nothing")
	}
}

// TestAutoEqualsNaiveGen is the same on every gen model, with default
// grids and a tier SLO.
func TestAutoEqualsNaiveGen(t *testing.T) {
	ssd, _ := tier.Builtin("ssd")
	specs := []string{
		"auto:age,slo=max_pr<=2%,history=8,every=3",
		"auto:paw,slo=p99_pr<=5%,history=6,every=4,margin=0%",
		"auto:pace,P=1|4|16|inf,A=1|2|8|inf,slo=mean_pr<=1%,history=10,every=5",
		"auto:age,slo=max_slowdown<=0.01%,history=8,every=2",
	}
	for _, model := range gen.Models {
		tr := genTrace(t, model, 300, 40, 5)
		total := 0
		for _, spec := range specs {
			a := mustAuto(t, spec, tr.Header.Window)
			if a.SLO.IsTier() {
				a.SLO.Tier = ssd
			}
			total += checkAuto(t, model, tr, a)
		}
		if total == 0 {
			t.Errorf("%s: no switch", model)
		}
	}
}

// TestControlledFixedEqualsRun checks the "due" rule against the fixed
// settings' own deciders: a controller that never switches from a setting
// is that setting (sim.Run), on random traces, for every online policy.
func TestControlledFixedEqualsRun(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 23))
	var ss []policy.Online
	for _, x := range []int{0, 1, 2, 4, policy.Inf} {
		ss = append(ss, policy.AGE{A: x})
		for _, y := range []int{0, 1, 3} {
			ss = append(ss, policy.PAW{P: x, Wait: y}, policy.PACE{P: x, A: y})
		}
	}
	for n := range testutil.Count(200) {
		tr := testutil.RandomTrace(rng)
		for _, s := range ss {
			got, err := sim.RunControlled(context.Background(), tr, fixed{s})
			if err != nil {
				t.Fatal(err)
			}
			want := sim.Run(tr, s)
			want.Policy, want.Params = "fixed", policy.String(s)
			if d := gocmp.Diff(want, got.Result); d != "" {
				t.Fatalf("trace %d %s: (-run +controlled):\n%s", n, policy.String(s), d)
			}
		}
	}
}

// fixed is a controller that holds one setting from the start.
type fixed struct{ s policy.Online }

func (f fixed) Policy() string                        { return "fixed" }
func (f fixed) Params() string                        { return policy.String(f.s) }
func (f fixed) NewRun(trace.Header) policy.ControlRun { return f }
func (f fixed) Start() policy.Online                  { return f.s }
func (f fixed) EndWindow(*trace.Window, policy.Outcome) (policy.Online, error) {
	return f.s, nil
}

// TestAutoLoweredAge is the switching rule on a page by hand: page 1 is
// touched in window 0 and idle after; the controller holds age A=5 until
// the end of window 3, then lowers it to A=1: the page, idle 3 windows at
// that scan point, is reclaimed there (not stranded), once, and saves
// windows 4..9.
func TestAutoLoweredAge(t *testing.T) {
	b := trace.NewBuilder(trace.Header{PageSize: 4096, Window: trace.DefaultWindow, Windows: 10})
	b.Add(0, trace.Access, trace.Page{Page: 1})
	tr := b.Trace()
	got, err := sim.RunControlled(context.Background(), tr, schedule{policy.AGE{A: 5}, 3, policy.AGE{A: 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	if !slices.Equal(got.Result.SavedPerWindow, want) || len(got.Switches) != 1 || got.Switches[0].Window != 3 {
		t.Fatalf("saved %v switches %+v, want %v and one switch at 3", got.Result.SavedPerWindow, got.Switches, want)
	}
	// Raised instead (A=1 until window 3, then A=5): reclaimed at the end
	// of window 1, it stays absent: raising A brings nothing back.
	got, _ = sim.RunControlled(context.Background(), tr, schedule{policy.AGE{A: 1}, 3, policy.AGE{A: 5}})
	if want := []int64{0, 0, 1, 1, 1, 1, 1, 1, 1, 1}; !slices.Equal(got.Result.SavedPerWindow, want) {
		t.Fatalf("raised: saved %v, want %v", got.Result.SavedPerWindow, want)
	}
}

// schedule holds a until the end of window at, then b.
type schedule struct {
	a  policy.Online
	at int
	b  policy.Online
}

func (s schedule) Policy() string                        { return "schedule" }
func (s schedule) Params() string                        { return "" }
func (s schedule) NewRun(trace.Header) policy.ControlRun { return s }
func (s schedule) Start() policy.Online                  { return s.a }
func (s schedule) EndWindow(w *trace.Window, _ policy.Outcome) (policy.Online, error) {
	if w.Index >= s.at {
		return s.b, nil
	}
	return s.a, nil
}

func TestParseAuto(t *testing.T) {
	a := mustAuto(t, "auto:paw,slo=max_pr<=2%,history=20,every=5", 30*time.Second)
	if got, want := a.Params(), "paw,slo=max_pr<=2%,history=20,every=5,margin=25%"; got != want {
		t.Errorf("Params %q, want %q", got, want)
	}
	if len(a.Grid) != len(policy.DefaultGrid("paw", 30*time.Second)) {
		t.Errorf("grid of %d settings, want paw's default grid", len(a.Grid))
	}
	a = mustAuto(t, "auto: age , A=1..4, slo = p99_pr<=1%, history=10m, margin=10%", 30*time.Second)
	if got, want := a.Params(), "age,A=1..4,slo=p99_pr<=1%,history=20,every=5,margin=10%"; got != want || len(a.Grid) != 4 {
		t.Errorf("Params %q (%d settings), want %q", got, len(a.Grid), want)
	}
	if again := mustAuto(t, "auto:"+a.Params(), 30*time.Second); again.Params() != a.Params() {
		t.Errorf("Params does not parse back: %q", again.Params())
	}
	for _, c := range []struct{ spec, err string }{
		{"auto:", "want a base policy"},
		{"auto:opp,slo=max_pr<=2%", "online base policy"},
		{"auto:foo,slo=max_pr<=2%", "unknown base policy"},
		{"auto:age", `missing key "slo"`},
		{"auto:age,slo=max_pr<2%", "bad SLO"},
		{"auto:age,slo=max_pr<=2%,history=0", "at least 1"},
		{"auto:age,slo=max_pr<=2%,every=45s", "whole number"},
		{"auto:age,slo=max_pr<=2%,margin=100%", "below 100%"},
		{"auto:age,slo=max_pr<=2%,every=2,every=3", "duplicate"},
		{"auto:age,slo=max_pr<=2%,B=3", `unknown key "B"`},
		{"auto:age,slo=max_pr<=2%,x", "want KEY=VALUE"},
	} {
		_, err := ParseAuto(c.spec, 30*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want one containing %q", c.spec, err, c.err)
		}
	}
}

// TestTuneControllers checks a controller's row in tune.Run against its
// parts computed here: its eval metrics are its sim run restricted to the
// eval windows, "fixed on train" is the policy row tune chooses for the
// base grid, and "fixed in hindsight" is the grid's best on eval.
func TestTuneControllers(t *testing.T) {
	tr := genTrace(t, "mix", 800, 60, 3)
	spec := "auto:age,slo=max_pr<=5%,history=10,every=3"
	slo := mustSLO(t, "max_pr<=5%")
	rep, err := Run(context.Background(), Config{SLO: slo, Policies: []string{"age", spec}, Traces: []Input{{Name: "mix", Reader: tr.NewReader()}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Controllers) != 1 || len(rep.Policies) != 1 {
		t.Fatalf("%d controllers, %d policies", len(rep.Controllers), len(rep.Policies))
	}
	c := rep.Controllers[0]
	a := mustAuto(t, spec, tr.Header.Window)
	run, err := sim.RunControlled(context.Background(), tr, a)
	if err != nil {
		t.Fatal(err)
	}
	slo.Window = tr.Header.Window
	if d := gocmp.Diff(slo.Measure(run.Result.Restrict(30, 60)), c.Eval); d != "" {
		t.Errorf("controller eval (-sim +tune):\n%s", d)
	}
	sw := 0
	for _, s := range run.Switches {
		if s.Window >= 30 {
			sw++
		}
	}
	if c.Switches != sw || c.SwitchesTotal != len(run.Switches) || c.Retunes < 20 {
		t.Errorf("switches %d/%d retunes %d, want %d/%d and at least 20", c.Switches, c.SwitchesTotal, c.Retunes, sw, len(run.Switches))
	}
	if p := rep.Policies[0]; c.Fixed == nil || c.Fixed.Spec != "age:"+p.Params || !gocmp.Equal(c.Fixed.Eval, p.Eval) {
		t.Errorf("fixed on train %+v, want the age row %s", c.Fixed, p.Params)
	}
	var best *result.Result
	for _, s := range a.Settings() {
		r := sim.Run(tr, s).Restrict(30, 60)
		if slo.Meets(r) && (best == nil || r.Saved > best.Saved) {
			best = r
		}
	}
	if c.Hindsight == nil || c.Hindsight.Eval.SavedPageWindows != best.Saved {
		t.Errorf("hindsight %+v, want %d saved", c.Hindsight, best.Saved)
	}
	var b strings.Builder
	if err := WriteCompareCSV(&b, rep); err != nil || strings.Count(b.String(), "\n") != 5 {
		t.Errorf("csv %q %v", b.String(), err)
	}
}

// TestTextControllersOnly: with controllers and no fixed policy, the text
// has the controllers' comparison and no empty fixed-policy table.
func TestTextControllersOnly(t *testing.T) {
	tr := genTrace(t, "mix", 400, 40, 5)
	spec := "auto:age,A=0..8,slo=max_pr<=5%,history=10,every=3"
	for _, policies := range [][]string{{spec}, {"age:A=0..8", spec}} {
		rep, err := Run(context.Background(), Config{SLO: mustSLO(t, "max_pr<=5%"), Policies: policies, Traces: []Input{{Name: "mix", Reader: tr.NewReader()}}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteText(&b, rep); err != nil {
			t.Fatal(err)
		}
		table := strings.Contains(b.String(), "\npolicy  settings  chosen on train")
		if want := len(policies) > 1; table != want {
			t.Errorf("%v: fixed-policy table %v, want %v:\n%s", policies, table, want, b.String())
		}
		if !strings.Contains(b.String(), "\nControllers on the eval part") || strings.Contains(b.String(), "\n\n\n") {
			t.Errorf("%v: want the controllers' table and no blank lines in a row:\n%s", policies, b.String())
		}
	}
}
