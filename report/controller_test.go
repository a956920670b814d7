package report

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"math"
	"strings"
	"testing"
	"time"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/stats"
	"mdk/trace"
	"mdk/tune"
)

// flip is a controller that is not auto, to show the section takes any
// policy.Controller: it reclaims nothing until window 3, then alternates
// between age:A=2 and age:A=8 every 5 windows.
type flip struct{}

func (flip) Policy() string                        { return "flip" }
func (flip) Params() string                        { return "A=2|8,every=5" }
func (flip) NewRun(trace.Header) policy.ControlRun { return &flipRun{} }

type flipRun struct{ w int }

func (*flipRun) Start() policy.Online { return policy.Nothing{} }
func (r *flipRun) EndWindow(*trace.Window, policy.Outcome) (policy.Online, error) {
	r.w++
	switch {
	case r.w < 3:
		return policy.Nothing{}, nil
	case (r.w/5)%2 == 0:
		return policy.AGE{A: 2}, nil
	}
	return policy.AGE{A: 8}, nil
}

// testControllers returns a report's data with two controllers, auto and
// flip, run by the simulator on a 120-window gen trace, beside age's and
// paw's grids and OPP (with a rate at each controller's realised max_pr,
// as mdk report adds it).
func testControllers(t *testing.T) *Data {
	t.Helper()
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = "mix", 4000, 120, 5
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	a, err := tune.ParseAuto("auto:age,A=0..20,slo=max_pr<=5%,history=10,every=3", cfg.Window)
	if err != nil {
		t.Fatal(err)
	}
	var ctl []Controller
	ss := append(policy.DefaultGrid("age", cfg.Window), policy.DefaultGrid("paw", cfg.Window)...)
	ss = append(ss, policy.DefaultGrid("opp", cfg.Window)...)
	for _, c := range []policy.Controller{a, flip{}} {
		run, err := sim.RunControlled(context.Background(), tr, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Switches) == 0 {
			t.Fatalf("%s never switches", c.Policy())
		}
		ctl = append(ctl, Controller{Result: run.Result, Switches: len(run.Switches)})
		ss = append(ss, policy.OPP{PPM: int64(run.Result.MaxPR() * policy.MaxPPM)})
	}
	rs, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ctl {
		rs = append(rs, c.Result)
	}
	s, err := stats.Compute(tr.NewReader())
	if err != nil {
		t.Fatal(err)
	}
	return &Data{Trace: "phases.mdkt", Command: "mdk report phases.mdkt -o r.html", Version: "test",
		Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Stats: s, Results: rs, Controllers: ctl}
}

// TestControllerSection: each controller's sentence, mdk mpc's line and a
// table row per fixed policy and OPP, the numbers of result.AtRealised on
// the fixed settings; without controllers, no section.
func TestControllerSection(t *testing.T) {
	d := testControllers(t)
	var buf bytes.Buffer
	if err := Generate(&buf, d, Options{}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(buf.String())
	fixed := d.Results[:len(d.Results)-len(d.Controllers)]
	for _, c := range d.Controllers {
		re := result.AtRealised(c.Result, fixed, result.MaxPR)
		t.Log(re.Sentence())
		if re.OPP == nil || len(re.Policies) != 2 {
			t.Fatalf("%s: OPP %v, %d policies: want OPP and age, paw", re.Name(), re.OPP, len(re.Policies))
		}
		if h, _ := re.Headroom(); re.OPP.MaxPR() > re.X || h < 0 {
			t.Errorf("%s: OPP %s at max_pr %v above the controller's %v, or headroom %v below 0", re.Name(), re.OPP.Params, re.OPP.MaxPR(), re.X, h)
		}
		for _, want := range []string{re.Sentence(), re.Line()} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		for _, p := range re.Policies {
			if p.Best != nil && !strings.Contains(re.Sentence(), p.Policy+" at its best ("+p.Best.Params+")") {
				t.Errorf("sentence %q does not name %s's best %s", re.Sentence(), p.Policy, p.Best.Params)
			}
		}
	}
	if n := strings.Count(page, `<table class="data controller-table"`); n != 2 {
		t.Errorf("%d controller tables, want 2", n)
	}
	nd := *d
	nd.Controllers = nil
	buf.Reset()
	if err := Generate(&buf, &nd, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="controllers"`) {
		t.Error("a report without controllers has a Controllers section")
	}
}

// TestControllersInBrowser opens the Controllers section in headless
// chromium: no script error or request, each controller's table shown
// with a row for it, OPP and each fixed policy, its sentence shown, and
// its headroom OPP's savings minus its own.
func TestControllersInBrowser(t *testing.T) {
	chromium := testutil.RequireTool(t, "chromium")
	d := testControllers(t)
	c := generateInBrowser(t, chromium, d, Options{MaxPoints: 100})
	if len(c.Controllers) != len(d.Controllers) {
		t.Fatalf("controllers self-check: %+v, want %d", c.Controllers, len(d.Controllers))
	}
	fixed := d.Results[:len(d.Results)-len(d.Controllers)]
	for i, got := range c.Controllers {
		re := result.AtRealised(d.Controllers[i].Result, fixed, result.MaxPR)
		if !got.Shown || got.Rows != 4 || got.Sentence != re.Sentence()+"." {
			t.Errorf("controller %d: %+v; want shown, 4 rows, sentence %q", i, got, re.Sentence())
		}
		if got.Savings == nil || got.Headroom == nil || got.OPPSavings == nil ||
			math.Abs(*got.Headroom-(*got.OPPSavings-*got.Savings)) > 1e-12 || *got.Savings != re.Run.Savings() {
			t.Errorf("controller %d: savings %v headroom %v, OPP's savings %v; want %v and the difference", i, got.Savings, got.Headroom, got.OPPSavings, re.Run.Savings())
		}
	}
}

// tuneMix is tune.Run at max_pr<=5% on a gen mix trace (seed 3) of pages x
// windows with the given policy specs.
func tuneMix(t *testing.T, pages, windows int, policies ...string) *tune.Report {
	t.Helper()
	slo, err := tune.ParseSLO("max_pr<=5%")
	if err != nil {
		t.Fatal(err)
	}
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = "mix", pages, windows, 3
	rep, err := tune.Run(context.Background(), tune.Config{SLO: slo, Policies: policies,
		Traces: []tune.Input{{Name: "mix.mdkt", Reader: gen.NewReader(cfg)}}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestTuneControllersTable: with --slo and a controller, the Tuning section
// lists mdk tune's comparison rows of the controller (controller, fixed on
// train, fixed in hindsight, opp) with their eval numbers.
func TestTuneControllersTable(t *testing.T) {
	rep := tuneMix(t, 2000, 60, "age:A=0..20", "opp", "auto:age,A=0..20,slo=max_pr<=5%,history=10,every=3")
	if len(rep.Controllers) != 1 {
		t.Fatalf("%d controllers in the tune report", len(rep.Controllers))
	}
	d := *testReport(t)
	d.Tune = rep
	var buf bytes.Buffer
	if err := Generate(&buf, &d, Options{}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(buf.String())
	i := strings.Index(page, `<table id="tune-controllers"`)
	if i < 0 {
		t.Fatal("no controllers' table in the Tuning section")
	}
	table := page[i : i+strings.Index(page[i:], "</table>")]
	rows := rep.Controllers[0].Rows(rep.OPP)
	if n := strings.Count(table, "<tr data-kind="); n != len(rows) || len(rows) < 3 {
		t.Errorf("%d rows in the table, %d in the report", n, len(rows))
	}
	for _, r := range rows {
		cell := fmt.Sprintf(`<td data-v="%s">%.2f%%</td>`, result.FormatFloat(r.M.Savings), 100*r.M.Savings)
		if !strings.Contains(table, `<tr data-kind="`+r.Kind+`">`) || !strings.Contains(table, cell) {
			t.Errorf("row %s: no %s in the table", r.Kind, cell)
		}
	}
}

// TestTuneControllersOnly: with controllers and no fixed policy (mdk
// report --slo -p auto:... alone), the Tuning section has the controllers'
// comparison and no empty fixed-policy table nor its sentence; in chromium
// the page's self-check runs without a script error.
func TestTuneControllersOnly(t *testing.T) {
	rep := tuneMix(t, 500, 40, "auto:age,A=0..8,slo=max_pr<=5%,history=10,every=3")
	if len(rep.Policies) != 0 || len(rep.Controllers) != 1 {
		t.Fatalf("%d fixed policies and %d controllers in the tune report, want 0 and 1", len(rep.Policies), len(rep.Controllers))
	}
	d := *testReport(t)
	d.Tune = rep
	var buf bytes.Buffer
	if err := Generate(&buf, &d, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, `<table id="tune" `) || strings.Contains(page, "For each policy, the setting") {
		t.Error("the Tuning section has a fixed-policy table (or its sentence) with no fixed policy")
	}
	if !strings.Contains(page, `<table id="tune-controllers"`) || !strings.Contains(page, `id="tune-yardstick"`) {
		t.Error("the Tuning section lacks the controllers' table or the yardstick")
	}
	chromium := testutil.RequireTool(t, "chromium")
	c := generateInBrowser(t, chromium, &d, Options{MaxPoints: 100})
	if c.Tune == nil || c.Tune.Rows != 0 || !c.Tune.Agrees {
		t.Errorf("tune self-check %+v, want 0 rows, agreeing", c.Tune)
	}
}
