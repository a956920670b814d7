package fleet_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/fleet"
	"mdk/fleet/fleettest"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
	"mdk/tune"
)

// ctlSpecs are the controllers of the controller tests: a tuner of age
// and one of pace, short histories so that they switch on small traces.
var ctlSpecs = []string{"auto:age,A=0..12,slo=max_pr<=5%,history=6,every=2", "auto:pace,P=2|inf,A=0..6/2,slo=p98_pr<=10%,history=8,every=3,margin=0%"}

// TestControllersEqualSim runs controllers in a fleet beside fixed settings
// and checks every job's realised point against the job run alone with
// sim.RunControlled, the fleet's controller rows against those points
// summed exactly here, and that the fixed settings' rows and the tuning are
// what they are without the controllers.
func TestControllersEqualSim(t *testing.T) {
	n := 7 // every gen model, text and binary
	if testing.Short() {
		n = 3 // the race pass
	}
	paths, err := fleettest.Write(t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	for _, slo := range []string{"", "max_pr<=2%"} {
		p := plan(t, slo)
		pc, err := fleet.Config{Policies: append(append([]string{}, specs...), ctlSpecs...), SLO: slo, Window: trace.DefaultWindow}.Compile()
		if err != nil {
			t.Fatal(err)
		}
		if len(pc.Controllers) != len(ctlSpecs) || len(pc.Settings) != len(p.Settings) {
			t.Fatalf("plan: %d controllers, %d settings", len(pc.Controllers), len(pc.Settings))
		}
		f, err := pc.RunLocal(context.Background(), paths, fleet.OpenFile, 3)
		if err != nil {
			t.Fatal(err)
		}
		fixed, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 2)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(fixed.Settings, f.Settings[:len(p.Settings)]); d != "" {
			t.Errorf("slo %q: the fixed settings' rows change with controllers (-without +with):\n%s", slo, d)
		}
		if d := cmp.Diff(fixed.Policies, f.Policies); d != "" {
			t.Errorf("slo %q: the policies' rows change with controllers (-without +with):\n%s", slo, d)
		}
		if f.Failed != 1 {
			t.Errorf("slo %q: %d failed jobs, want the broken one", slo, f.Failed)
		}
		for ci, spec := range ctlSpecs {
			want := sumControllers(t, f.JobResults, spec, ci, len(p.Settings), pc.SLO)
			got := f.Settings[len(p.Settings)+ci]
			if !got.Controller || got.Policy+":"+got.Params != "auto:"+pc.Controllers[ci].Params() {
				t.Errorf("row %d is %s:%s (controller %v), want %s", len(p.Settings)+ci, got.Policy, got.Params, got.Controller, spec)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("slo %q: %s: fleet row (-summed here +fleet):\n%s", slo, spec, d)
			}
		}
	}
}

// sumControllers runs controller spec alone with sim on every job of jrs
// that did not fail, checks the job's point (curve index base+ci) against
// it, and returns the fleet row those runs sum to.
func sumControllers(t *testing.T, jrs []fleet.JobResult, spec string, ci, base int, slo *tune.SLO) fleet.SettingRow {
	t.Helper()
	type part struct {
		saved, alive, footprint *big.Rat
		savedPW                 int64
		jobs, breaking          int64
	}
	newPart := func() *part { return &part{saved: new(big.Rat), alive: new(big.Rat), footprint: new(big.Rat)} }
	whole, train, eval := newPart(), newPart(), newPart()
	var switches int64
	var params string
	for _, jr := range jrs {
		if jr.Error != "" {
			continue
		}
		r, c, err := trace.Open(jr.Job)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := trace.ReadAll(r)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		a, err := tune.ParseAuto(spec, tr.Header.Window)
		if err != nil {
			t.Fatal(err)
		}
		params = a.Params()
		run, err := sim.RunControlled(context.Background(), tr, a)
		if err != nil {
			t.Fatal(err)
		}
		res := run.Result
		var peak int64
		for _, x := range res.AlivePerWindow {
			peak = max(peak, x)
		}
		ps := res.PageSize
		add := func(p *part, r *result.Result, breaks bool) {
			w := int64(r.Windows())
			p.saved.Add(p.saved, big.NewRat(r.Saved*ps, w))
			p.alive.Add(p.alive, big.NewRat(r.Alive*ps, w))
			p.footprint.Add(p.footprint, big.NewRat(peak*ps, 1))
			p.savedPW += r.Saved
			p.jobs++
			if breaks {
				p.breaking++
			}
		}
		pt := fleet.Point{Policy: "auto", Params: params, MaxPR: res.MaxPR(), P99PR: res.Percentile(99), P98PR: res.Percentile(98),
			MeanPR: res.MeanPR(), Promotions: res.TotalPromotions(), Saved: res.Saved, Switches: len(run.Switches)}
		switches += int64(len(run.Switches))
		if slo != nil {
			half := len(tr.Windows) / 2
			tp, ep := res.Restrict(0, half), res.Restrict(half, len(tr.Windows))
			pt.Breaks, pt.TrainSaved, pt.TrainBreaks, pt.EvalSaved, pt.EvalBreaks = !slo.Meets(res), tp.Saved, !slo.Meets(tp), ep.Saved, !slo.Meets(ep)
			add(train, tp, pt.TrainBreaks)
			add(eval, ep, pt.EvalBreaks)
		}
		add(whole, res, pt.Breaks)
		if d := cmp.Diff(pt, jr.Curve[base+ci]); d != "" {
			t.Errorf("%s: %s: the job's point (-sim alone +fleet):\n%s", jr.Job, spec, d)
		}
	}
	numbers := func(p *part, withBreaking bool) fleet.Numbers {
		f := func(r *big.Rat) float64 { x, _ := r.Float64(); return x }
		n := fleet.Numbers{Jobs: p.jobs, AvgSavedBytes: f(p.saved),
			Savings:      f(new(big.Rat).Quo(p.saved, p.footprint)),
			AliveSavings: f(new(big.Rat).Quo(p.saved, p.alive))}
		if withBreaking {
			n.BreakingJobs, n.BreakingShare = p.breaking, float64(p.breaking)/float64(p.jobs)
		}
		return n
	}
	row := fleet.SettingRow{Policy: "auto", Params: params, SavedPageWindows: whole.savedPW, Numbers: numbers(whole, true),
		Controller: true, Switches: switches}
	if slo != nil {
		tn, en := numbers(train, true), numbers(eval, true)
		row.Train, row.Eval = &tn, &en
	}
	return row
}

// TestControllersOnly: a fleet of controllers alone has no fixed settings
// and no policy rows, and its rows are the controllers'.
func TestControllersOnly(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	p, err := fleet.Config{Policies: ctlSpecs[:1], Window: trace.DefaultWindow}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Settings) != 1 || f.Policies != nil {
		t.Fatalf("%d settings, %d policies; want the controller alone", len(f.Settings), len(f.Policies))
	}
	if d := cmp.Diff(sumControllers(t, f.JobResults, ctlSpecs[0], 0, 0, nil), f.Settings[0]); d != "" {
		t.Errorf("fleet row (-summed here +fleet):\n%s", d)
	}
}

// TestControllerConfigErrors: a controller on a sample, or with a slowdown
// SLO and no tier, is refused when the plan is compiled.
func TestControllerConfigErrors(t *testing.T) {
	for _, c := range []fleet.Config{
		{Policies: ctlSpecs[:1], Window: trace.DefaultWindow, SamplePPM: 10000},
		{Policies: []string{"auto:age,slo=slowdown<=1%"}, Window: trace.DefaultWindow},
		{Policies: []string{"auto:opp,slo=max_pr<=1%"}, Window: trace.DefaultWindow},
	} {
		if _, err := c.Compile(); err == nil {
			t.Errorf("%+v: compiled", c)
		}
	}
}
