package fleet

import (
	"context"
	"fmt"
	"runtime/debug"

	"mdk/mpc"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
	"mdk/tune"
)

// JobResult is one job's outcome: its footprint, its curve (one point per
// requested setting, then one per controller: its realised point) and, with an SLO, its tuned setting per policy and OPP's
// yardstick. It is plain data and encodes to JSON (how fleet/beam ships it).
// A job that failed has Error set and nothing else but Job.
type JobResult struct {
	Job   string `json:"job"`
	Error string `json:"error,omitempty"`

	PageSize int64 `json:"page_size"`
	Windows  int   `json:"windows"`
	// PeakAlivePages is the most pages alive in any window; the job's
	// footprint is PeakAlivePages x PageSize bytes.
	PeakAlivePages   int64 `json:"peak_alive_pages"`
	AlivePageWindows int64 `json:"alive_page_windows"`
	// AccessRecords is Σ|A_w|: the (page, window) access records.
	AccessRecords int64 `json:"access_records"`

	// With an SLO, the training and evaluation windows (tune's default
	// split) and their alive page-windows.
	Train      *tune.Range `json:"train_windows,omitempty"`
	Eval       *tune.Range `json:"eval_windows,omitempty"`
	TrainAlive int64       `json:"train_alive_page_windows,omitempty"`
	EvalAlive  int64       `json:"eval_alive_page_windows,omitempty"`

	// SampleRate, for a job run on a sample of its pages, is the rate
	// (0.01 = 1%): every count is an estimate, and each point has Err.
	SampleRate float64 `json:"sample_rate,omitempty"`
	// SmallSample, for a job whose sample holds no page or fewer than
	// result.MinBoundPages, says so (result.Result.SmallSample): the
	// summary prints it as a WARNING.
	SmallSample string `json:"small_sample,omitempty"`
	// Groups, for a sampled job with sub-samples, are each sub-sample's
	// own estimates (counts x k/rate) of the footprint and alive
	// page-windows: what the fleet's error bounds are computed from.
	Groups []JobGroup `json:"groups,omitempty"`

	Curve []Point       `json:"curve"`
	Tuned []tune.Choice `json:"tuned,omitempty"` // per policy, in Plan.Names order
	// OPP is tune's yardstick on the evaluation windows.
	OPP *tune.Yardstick `json:"opp,omitempty"`
}

// Point is one setting's run over one whole trace (the record of SPEC section
// 6 without the trace's alive page-windows), plus, with an SLO, whether its
// statistic breaks the SLO on the whole trace and on each part, and its saved
// page-windows on each part.
type Point struct {
	Policy     string  `json:"policy"`
	Params     string  `json:"params"`
	MaxPR      float64 `json:"max_pr"`
	P99PR      float64 `json:"p99_pr"`
	P98PR      float64 `json:"p98_pr"`
	MeanPR     float64 `json:"mean_pr"`
	Promotions int64   `json:"promotions"`
	Saved      int64   `json:"saved_page_windows"`
	// Switches, for a controller's point, counts the switches of its
	// setting over the whole trace.
	Switches int `json:"switches,omitempty"`

	Breaks      bool  `json:"breaks,omitempty"`
	TrainSaved  int64 `json:"train_saved_page_windows,omitempty"`
	TrainBreaks bool  `json:"train_breaks,omitempty"`
	EvalSaved   int64 `json:"eval_saved_page_windows,omitempty"`
	EvalBreaks  bool  `json:"eval_breaks,omitempty"`

	// Err, for a sampled job, holds the error bounds of the whole-trace
	// metrics (result.Result.Bound).
	Err *result.Errors `json:"err,omitempty"`
	// Groups, for a sampled job, are the sub-samples' saved page-windows
	// (JobResult.Groups).
	Groups []PointGroup `json:"groups,omitempty"`
}

// JobGroup is one sub-sample's estimates of a sampled job's footprint and
// alive page-windows (whole trace, and with an SLO its two parts).
type JobGroup struct {
	PeakAlivePages   int64 `json:"peak_alive_pages"`
	AlivePageWindows int64 `json:"alive_page_windows"`
	TrainAlive       int64 `json:"train_alive_page_windows,omitempty"`
	EvalAlive        int64 `json:"eval_alive_page_windows,omitempty"`
}

// PointGroup is one sub-sample's estimates of a point's saved page-windows.
type PointGroup struct {
	Saved      int64 `json:"saved_page_windows"`
	TrainSaved int64 `json:"train_saved_page_windows,omitempty"`
	EvalSaved  int64 `json:"eval_saved_page_windows,omitempty"`
}

// FootprintBytes returns the job's footprint: peak alive pages x page size.
func (j *JobResult) FootprintBytes() int64 { return j.PeakAlivePages * j.PageSize }

// Run runs the plan over one job's trace: every setting in one pass
// (mpc.Generate), then the job's numbers. An error (unreadable or corrupt
// trace, wrong window length, too few windows to split) is returned in the
// result, never as a panic; only a cancelled ctx is returned as an error.
//
//  1. Check the window length against the plan's.
//  2. Run every setting of Plan.All over the whole trace, and each of
//     Plan.Controllers (sim.RunControlled, the trace then held in memory).
//  3. Footprint: peak and total alive pages, access records.
//  4. Curve: each requested setting's metrics on the whole trace, then
//     each controller's (with an SLO, on each part too, and its switches).
//  5. With an SLO, tune's rules (docs/tune.md): cut the windows into the
//     default halves and choose (tune's SLO.Choose) each policy's best
//     setting on the training half, measured on both halves, and OPP's best
//     setting on the evaluation half itself (the yardstick).
func (p *Plan) Run(ctx context.Context, name string, r trace.Reader) (jr JobResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			jr = JobResult{Job: name, Error: fmt.Sprintf("internal error: %v\n%s", v, debug.Stack())}
			err = nil
		}
	}()
	jr, err = p.run(ctx, name, r)
	if err != nil {
		if ctx.Err() != nil {
			return JobResult{Job: name}, ctx.Err()
		}
		return JobResult{Job: name, Error: err.Error()}, nil
	}
	return jr, nil
}

func (p *Plan) run(ctx context.Context, name string, r trace.Reader) (JobResult, error) {
	jr := JobResult{Job: name}
	// 1.
	if w := r.Header().Window; w != p.Config.Window {
		return jr, fmt.Errorf("%s: window length %s differs from the fleet's %s (policy parameters count windows): run it in a fleet of its own",
			name, trace.FormatDuration(w), trace.FormatDuration(p.Config.Window))
	}
	// 2.
	var t *trace.Trace
	if len(p.Controllers) > 0 {
		var err error
		if t, err = trace.ReadAll(r); err != nil {
			return jr, fmt.Errorf("%s: %w", name, err)
		}
		if !t.Header.Sample.All() {
			return jr, fmt.Errorf("%s: a controller (auto) needs a trace of every page, not a %s sample", name, t.Header.Sample)
		}
		r = t.NewReader()
	}
	var runs []*result.Result
	if len(p.All) > 0 {
		var err error
		runs, err = mpc.Generate(ctx, r, p.All, mpc.Options{
			Sample: trace.Sample{PPM: p.Config.SamplePPM, Seed: p.Config.SampleSeed}, Groups: p.Config.SampleGroups})
		if err != nil {
			return jr, fmt.Errorf("%s: %w", name, err)
		}
	}
	ctl := make([]*sim.Controlled, len(p.Controllers))
	for i, a := range p.Controllers {
		c, err := sim.RunControlled(ctx, t, a)
		if err != nil {
			return jr, fmt.Errorf("%s: %w", name, err)
		}
		ctl[i] = c
	}
	return p.job(name, runs, ctl)
}

// job computes a job's numbers (steps 3 to 5 of Run) from its runs: one
// result per setting of Plan.All, then each controller's.
func (p *Plan) job(name string, runs []*result.Result, ctl []*sim.Controlled) (JobResult, error) {
	jr := JobResult{Job: name}
	// 3.
	var r0 *result.Result
	if len(runs) > 0 {
		r0 = runs[0]
	} else {
		r0 = ctl[0].Result
	}
	jr.PageSize, jr.Windows, jr.AlivePageWindows = r0.PageSize, r0.Windows(), r0.Alive
	if jr.Windows == 0 {
		return jr, fmt.Errorf("%s: the trace has no windows", name)
	}
	if r0.Sampled() {
		jr.SampleRate = float64(r0.SamplePPM) / 1e6
		jr.SmallSample = r0.SmallSample()
	}
	for _, a := range r0.AlivePerWindow {
		jr.PeakAlivePages = max(jr.PeakAlivePages, a)
	}
	for _, a := range r0.Accessed {
		jr.AccessRecords += a
	}
	var train, eval func(*result.Result) *result.Result
	if p.SLO != nil {
		tr, ev, err := tune.DefaultWindowSplit(name, jr.Windows)
		if err != nil {
			return jr, err
		}
		jr.Train, jr.Eval = &tr, &ev
		train = func(r *result.Result) *result.Result { return r.Restrict(tr.First, tr.Last+1) }
		eval = func(r *result.Result) *result.Result { return r.Restrict(ev.First, ev.Last+1) }
		jr.TrainAlive, jr.EvalAlive = train(r0).Alive, eval(r0).Alive
	}
	if r0.Sampled() && len(r0.Groups) >= 2 {
		jr.Groups = make([]JobGroup, len(r0.Groups))
		for g, gr := range r0.Groups {
			jg := JobGroup{AlivePageWindows: gr.Alive}
			for _, a := range gr.AlivePerWindow {
				jg.PeakAlivePages = max(jg.PeakAlivePages, a)
			}
			if p.SLO != nil {
				jg.TrainAlive, jg.EvalAlive = train(gr).Alive, eval(gr).Alive
			}
			jr.Groups[g] = jg
		}
	}
	// 4.
	jr.Curve = make([]Point, len(p.Settings), len(p.Settings)+len(ctl))
	point := func(r *result.Result) Point {
		pt := Point{
			Policy: r.Policy, Params: r.Params,
			MaxPR: r.MaxPR(), P99PR: r.Percentile(99), P98PR: r.Percentile(98), MeanPR: r.MeanPR(),
			Promotions: r.TotalPromotions(), Saved: r.Saved, Err: r.Errors(),
		}
		if p.SLO != nil {
			t, e := train(r), eval(r)
			pt.Breaks = !p.SLO.Meets(r)
			pt.TrainSaved, pt.TrainBreaks = t.Saved, !p.SLO.Meets(t)
			pt.EvalSaved, pt.EvalBreaks = e.Saved, !p.SLO.Meets(e)
		}
		if jr.Groups != nil && len(r.Groups) == len(jr.Groups) {
			pt.Groups = make([]PointGroup, len(r.Groups))
			for g, gr := range r.Groups {
				pg := PointGroup{Saved: gr.Saved}
				if p.SLO != nil {
					pg.TrainSaved, pg.EvalSaved = train(gr).Saved, eval(gr).Saved
				}
				pt.Groups[g] = pg
			}
		}
		return pt
	}
	for k, r := range runs[:len(p.Settings)] {
		jr.Curve[k] = point(r)
	}
	for _, c := range ctl {
		pt := point(c.Result)
		pt.Switches = len(c.Switches)
		jr.Curve = append(jr.Curve, pt)
	}
	if p.SLO == nil {
		return jr, nil
	}
	// 5.
	jr.OPP, jr.Tuned = p.SLO.Choose(p.All, len(p.Settings),
		func(k int) *result.Result { return train(runs[k]) },
		func(k int) *result.Result { return eval(runs[k]) })
	// L-OPP as mdk tune chooses it: on the validation windows, the last
	// quarter of the training half.
	if _, val, ok := tune.ValidationSplit(*jr.Train); ok {
		for i := range jr.Tuned {
			if c := &jr.Tuned[i]; tune.ChoosesOnValidation(c.Policy) {
				p.SLO.RedoOnValidation(c, p.All[:len(p.Settings)],
					func(k int) *result.Result { return train(runs[k]) },
					func(k int) *result.Result { return runs[k].Restrict(val.First, val.Last+1) },
					func(k int) *result.Result { return eval(runs[k]) }, jr.OPP)
			}
		}
	}
	p.SLO.Finish(jr.Tuned, p.All[:len(p.Settings)], 0, func(k int) []tune.Segment {
		return p.SLO.BrokeAt(name, runs[k], *jr.Eval)
	})
	return jr, nil
}
