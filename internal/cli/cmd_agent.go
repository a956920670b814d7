package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"mdk/agent"
	"mdk/internal/outfile"
	"mdk/linux"
	"mdk/policy"
	"mdk/report"
	"mdk/trace"
	"mdk/tune"
)

type agentOptions struct {
	pids        []int
	cgroup      string
	replay      string
	tracker     string
	spec        string
	model       string
	tier        string
	window      time.Duration
	duration    time.Duration
	out         string
	dryRun      bool
	maxPages    int
	psi         float64
	psiFile     string
	slo         float64
	sloWindows  int
	swapFloor   string
	force       bool
	metricsAddr string
	log         string
	proc, sys   string
	lock        int
}

func newAgentCmd(e *env) *cobra.Command {
	var o agentOptions
	d := agent.DefaultOptions
	cmd := &cobra.Command{
		Use:   "agent (--pid PID... | --cgroup PATH | --replay TRACE) --policy SPEC --window D -o RUN",
		Short: "Apply a policy to live processes and measure what it really saves and costs",
		Long: `Agent applies one policy setting to running processes and measures, window
by window, what it really saves and costs; mdk agent compare RUN then sets
the simulator's prediction on the observed trace beside it. docs/agent.md is
the manual.

One loop wakes once per window. For all targets together it takes the
window's accesses from the tracker, reads pagemap to see what became of the
pages it reclaimed (present again and accessed: a promotion; still out: a
saved page-window), decides with the policy's own code (the simulator's),
reclaims the chosen pages with process_madvise(MADV_PAGEOUT) through a pidfd,
and re-reads pagemap to confirm what went out; pages still present are
refused, with the reason where /proc/kpageflags tells it.

Trackers: --pid/--cgroup use idle page tracking (--tracker idle, the scanner
of mdk record; needs CONFIG_IDLE_PAGE_TRACKING) and run age, paw, pace and
lopp. --replay TRACE starts mdk workload replay TRACE, which touches the
trace's pages on the agent's window clock, and takes the trace as the access
signal: every policy, vmin and opp included, runs for real. A cgroup's
processes are read once, at the start. --tracker damon follows one --pid
with DAMON (region-level: a region accessed in a window makes all its pages
accessed; its aggregation interval is the window and keeps the agent's
clock); it starts a kdamond only when one is free and never takes over a
kdamond it did not start: when every kdamond is busy it refuses, having
written nothing.

--policy may be a controller, 'auto:BASE,slo=STAT<=RATE,...' (a
promotion-rate SLO), gswap[:...] or damos[:...] (no psi goal) (docs/policies.md,
"Controllers"): at every window's end it is handed the
window and its measured outcome, names the setting in force from that scan
point on (retuning on the windows seen so far), and the agent decides with
it. measured.csv then ends with the columns setting and switch, the JSON
lines with the keys setting and switch, and the metrics add
mdk_agent_switches_total and mdk_agent_current_setting; mdk agent compare
predicts with the same controller in the simulator. 'senpai:...' (Meta's
Senpai, docs/policies.md "senpai") needs --tier: its pressure is the
measured promotions x the tier's swap-in latency, which run.json records in
the setting (swapin_ns) for compare.

RUN is a directory: its parent must exist, and a directory that already
holds a run is refused unless --force (which replaces the run's files at the
end). It holds trace.mdkt (the observed trace), measured.csv (one row
per window; the same rows as JSON lines to --log), skipped.csv (pages
decided but not reclaimed, with the cause), run.json (the setting). Each file
is written under a temporary name and renamed at the end; Ctrl-C and SIGTERM
end the run with every completed window written.

Safety: --dry-run decides and measures and reclaims nothing (it needs no
CAP_SYS_NICE); at most --max-pages pages per window (0: none); no reclaim in a window when memory pressure
(PSI some avg10 of --psi-file, default /proc/pressure/memory) is above
--psi; no reclaim while the measured promotion rate has been above --slo for
--slo-windows windows; swap free never below --swap-floor; without active
swap the agent refuses to start. The agent never signals, pauses or writes
to its targets. A target that exits ends its part; when all have, the run
ends. --metrics-addr serves the per-window numbers and the agent's cost to
Prometheus.

Needs root (CAP_SYS_NICE for process_madvise, CAP_SYS_ADMIN for idle page
tracking and /proc/kpageflags) and Linux 5.10.

EXIT STATUS
  0    the run ended (duration, targets exited, trace replayed, Ctrl-C)
  1    the run failed: no swap, no such process, no permission, no idle page
       tracking, no free DAMON kdamond, not Linux, I/O error
  2    bad command line`,
		Example: `  sudo mdk agent --replay app.mdkt --policy age:A=2 --window 2s -o run-age
  sudo mdk agent --pid 1234 --policy 'paw:P=4,wait=2' --window 30s --duration 2h -o run-paw --metrics-addr :9110
  sudo mdk agent --cgroup /sys/fs/cgroup/db.slice --policy age:A=10m --dry-run -o dry
  mdk agent compare run-age`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseZero(cmd.Flags(), "duration"); err != nil {
				return err
			}
			return runAgent(e, o)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&o.pids, "pid", nil, "apply the policy to process `PID` (repeatable)")
	f.StringVar(&o.cgroup, "cgroup", "", "apply the policy to the processes of the cgroup directory `PATH`")
	f.StringVar(&o.replay, "replay", "", "replay `TRACE` in a workload process (the replay tracker)")
	f.StringVar(&o.tracker, "tracker", "idle", "tracker of live processes: `idle` (idle page tracking) or damon (DAMON, one --pid)")
	f.StringVar(&o.spec, "policy", "", "the policy setting `SPEC` (one setting, e.g. age:A=2)")
	f.StringVar(&o.model, "model", "", "L-OPP model `FILE` for a lopp setting")
	f.StringVar(&o.tier, "tier", "", tierUsage+": the swap-in latency senpai's modelled pressure is charged (senpai only)")
	f.DurationVar(&o.window, "window", trace.DefaultWindow, "window `length`: the agent wakes once per window")
	f.DurationVar(&o.duration, "duration", 0, "stop after this `duration` (default: until the targets exit, the trace ends, or Ctrl-C)")
	f.StringVarP(&o.out, "output", "o", "", "run `DIR` to write")
	f.BoolVar(&o.force, "force", false, "replace the run already in -o RUN")
	f.BoolVar(&o.dryRun, "dry-run", false, "decide and measure, reclaim nothing")
	f.IntVar(&o.maxPages, "max-pages", d.MaxPages, "reclaim at most `N` pages per window (0: none; the decided pages are skipped, cause limit)")
	f.Float64Var(&o.psi, "psi", d.PSIThreshold, "reclaim nothing in a window when memory PSI some avg10 is above this `percent` (0 to 100; 0: off)")
	f.StringVar(&o.psiFile, "psi-file", "", "pressure `FILE` (a cgroup's memory.pressure; default <proc>/pressure/memory)")
	f.Float64Var(&o.slo, "slo", 0, "promotion-rate `SLO` (fraction of accessed pages, 0 to 1: 0.02 is 2%); stop reclaiming while broken (0: off)")
	f.IntVar(&o.sloWindows, "slo-windows", d.SLOWindows, "consecutive `windows` over --slo that stop reclaiming")
	f.StringVar(&o.swapFloor, "swap-floor", formatSize(d.SwapFloorBytes), "keep at least `SIZE` of swap free (bytes, or with a unit: 512K, 64M, 1.5G, 2GiB)")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on `ADDR` (host:port) at /metrics")
	f.StringVar(&o.log, "log", "-", "JSON lines of every window to `FILE` (- standard error, empty: none)")
	f.StringVar(&o.proc, "proc", envOr("MDK_PROC", linux.DefaultProc), "procfs mount point `DIR` ($MDK_PROC)")
	f.StringVar(&o.sys, "sys", envOr("MDK_SYS", linux.DefaultSys), "sysfs mount point `DIR` ($MDK_SYS)")
	f.IntVar(&o.lock, "replay-lock", 0, "the replay workload mlocks its first `N` pages (to see refusals)")
	cmd.AddCommand(newAgentCompareCmd(e))
	return cmd
}

func runAgent(e *env, o agentOptions) error {
	targets := 0
	if len(o.pids) > 0 {
		targets++
	}
	if o.cgroup != "" {
		targets++
	}
	if o.replay != "" {
		targets++
	}
	if targets != 1 {
		return usagef("give one of --pid PID (repeatable), --cgroup PATH or --replay TRACE")
	}
	if o.tracker != "idle" && o.tracker != "damon" {
		return usagef("--tracker %q: want idle or damon", o.tracker)
	}
	if o.tracker == "damon" && (o.replay != "" || o.cgroup != "" || len(o.pids) != 1) {
		return usagef("--tracker damon follows one process: give one --pid (not several, not --cgroup or --replay)")
	}
	if o.out == "" {
		return usagef("agent needs -o RUN (a directory)")
	}
	if o.spec == "" {
		return usagef("agent needs --policy SPEC")
	}
	if err := checkLiveWindow(o.window); err != nil {
		return err
	}
	if o.duration < 0 || o.duration > 0 && o.duration < o.window {
		return usagef("--duration %v is shorter than one --window (%v)", o.duration, o.window)
	}
	if o.maxPages < 0 || o.sloWindows < 1 {
		return usagef("--max-pages must not be negative, --slo-windows at least 1")
	}
	if !(o.psi >= 0 && o.psi <= 100) {
		return usagef("--psi %v: want a percentage from 0 to 100 (0: off)", o.psi)
	}
	if !(o.slo >= 0 && o.slo <= 1) {
		return usagef("--slo %v: want a fraction of the accessed pages from 0 to 1, such as 0.02 for 2%% (0: off)", o.slo)
	}
	swapFloor, err := parseSize(o.swapFloor)
	if err != nil {
		return usagef("--swap-floor %v", err)
	}
	if err := agent.CheckRunDir(o.out, o.force); err != nil {
		return err
	}
	if o.log != "" && o.log != "-" {
		if err := outfile.Check(o.log); err != nil {
			return fmt.Errorf("--log: %w", err)
		}
	}
	var ss []policy.Setting
	var ctl *agent.Controlled
	if o.tier != "" && !policy.IsSenpai(o.spec) {
		return usagef("--tier is for senpai's modelled pressure; --policy %s does not use it", o.spec)
	}
	if tune.IsController(o.spec) {
		a, err := parseAgentController(o.spec, o.window, o.model, o.tier)
		if err != nil {
			return err
		}
		ctl = agent.NewControlled(a)
		ss = []policy.Setting{ctl.Setting()}
	} else if ss, err = parseSpecs([]string{o.spec}, o.window, o.model); err != nil {
		return err
	}
	if len(ss) != 1 {
		return usagef("--policy %s is %d settings; the agent applies one", o.spec, len(ss))
	}
	fsys := linux.NewFS(o.proc, o.sys)
	opt := agent.DefaultOptions
	if ctl != nil {
		opt.Controller = ctl
	}
	opt.Setting, opt.Window, opt.DryRun, opt.MaxPages = ss[0], o.window, o.dryRun, o.maxPages
	opt.PSIThreshold, opt.PSIPath, opt.SLO, opt.SLOWindows = o.psi, o.psiFile, o.slo, o.sloWindows
	opt.SwapFloorBytes, opt.Model, opt.FS, opt.Dir, opt.Force = swapFloor, o.model, fsys, o.out, o.force
	if o.duration > 0 {
		opt.Windows = int(o.duration / o.window)
	}
	switch o.log {
	case "":
	case "-":
		opt.Log = e.stderr
	default:
		f, err := os.Create(o.log)
		if err != nil {
			return err
		}
		defer f.Close()
		opt.Log = f
	}
	if o.metricsAddr != "" {
		m := agent.NewMetrics(policy.String(ss[0]))
		reg := prometheus.NewRegistry()
		if err := m.Register(reg); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		fmt.Fprintf(e.stderr, "mdk agent: metrics on http://%s/metrics\n", ln.Addr())
		opt.Metrics = m
	}

	if !o.dryRun {
		if err := agent.CheckSwap(fsys); err != nil {
			return err
		}
	}
	var tr agent.Tracker
	switch {
	case o.replay != "":
		rd, c, err := trace.Open(o.replay)
		if err != nil {
			return err
		}
		t, err := trace.ReadAll(rd)
		c.Close()
		if err != nil {
			return err
		}
		argv, err := agent.WorkloadArgv(o.replay)
		if err != nil {
			return err
		}
		if o.lock > 0 {
			argv = append(argv, fmt.Sprintf("--lock=%d", o.lock))
		}
		r, err := agent.StartReplay(t, argv, e.stderr)
		if err != nil {
			return err
		}
		tr = r
	default:
		switch o.tracker {
		case "idle":
		case "damon":
			dt, err := agent.NewDamon(e.ctx, fsys, o.pids[0], o.window)
			if err != nil {
				return err
			}
			tr = dt
		default:
			return usagef("--tracker %q: want idle or damon", o.tracker)
		}
		if tr != nil {
			break
		}
		pids := o.pids
		if o.cgroup != "" {
			if pids, err = fsys.CgroupProcs(o.cgroup); err != nil {
				return fmt.Errorf("cgroup %s: %w", o.cgroup, err)
			}
			if len(pids) == 0 {
				return fmt.Errorf("cgroup %s has no processes", o.cgroup)
			}
			opt.Cgroup = o.cgroup
		}
		it, err := agent.NewIdle(fsys, pids, o.window)
		if err != nil {
			return err
		}
		tr = it
	}
	ctx := e.ctx
	sum, err := agent.Run(ctx, tr, opt)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Fprintf(e.stderr, "mdk agent: %d windows to %s: %d pages decided, %d out, %d refused, %d skipped; %d promotions, %d saved page-windows; agent CPU %v\n",
		sum.Windows, o.out, sum.Decided, sum.Out, sum.Refused, sum.Skipped, sum.Promotions, sum.Saved, sum.CPU.Round(time.Microsecond))
	return nil
}

func newAgentCompareCmd(e *env) *cobra.Command {
	var format, model, tierName, predictedFrom string
	cmd := &cobra.Command{
		Use:   "compare RUN",
		Short: "Set the simulator's prediction on the observed trace beside what the agent measured",
		Long: `Compare reads the run directory RUN of mdk agent, runs the reference
simulator on the trace the agent observed (RUN/trace.mdkt) with the same
setting (RUN/run.json), and prints predicted beside measured, per window and
in total: pages decided, promotions, saved page-windows, the PR statistics
and savings. Every difference is split by its cause: the pages the kernel
refused, the pages the safety limits kept, and what neither explains
(tracker slack; zero for a replay). Pages the kernel swapped by itself are
outside the model and shown apart, as are the kernel's own counters (major
faults of the targets, pswpin, the memory cgroup's workingset_refault_anon).
Then the memory as the kernel counts it, per window and on average: the
alive pages of the observed trace (no reclaim), the targets' VmRSS and
VmSwap, the zram swap devices' own memory (mm_stat mem_used_total), net =
RSS + zram, and the saved pages net of compression (saved - zram).

--format text (a table and the explanation), csv (per window) or json.

With --tier (a built-in tier or a tier file from mdk calibrate) it also sets
the tier model's stall time (the tier's mean promotion latency for each
predicted and each measured promotion) beside the replay workload's measured
slow touches and their time, per window and in total, with both slowdowns,
so the model can be checked and corrected (docs/tiers.md).

With --predicted-from RECORDING (the trace of an earlier run of the same
application, e.g. mdk record --pid) it sets three things side by side, per
window and in total: the recording's prediction for the run's setting (what
the curve said when the setting was chosen), the counterfactual (the
simulator on the trace observed during the run) and the measurement; and
splits recorded - measured into time shift (the best alignment offset of
the two traces' accessed sets), workload change (the rest of the two
predictions' difference, with the per-window Jaccard of the accessed sets),
refused pages, safety limits, pages swapped back in and tracker slack,
which add up in every window (docs/agent.md).

EXIT STATUS
  0    printed
  1    RUN is missing or damaged
  2    bad command line`,
		Example: `  mdk agent compare run-age
  mdk agent compare run-age --format csv > side-by-side.csv
  mdk agent compare run-paw --predicted-from yesterday.mdkt`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if predictedFrom != "" {
				if tierName != "" {
					return usagef("--predicted-from and --tier: give one")
				}
				p, err := compareRunPredicted(args[0], model, predictedFrom)
				if err != nil {
					return err
				}
				return writeFormat(e.stdout, p, format)
			}
			t, err := loadTier(tierName)
			if err != nil {
				return err
			}
			c, err := compareRun(args[0], model)
			if err != nil {
				return err
			}
			var tc *agent.TierComparison
			if t != nil {
				if tc, err = agent.CompareTier(args[0], c, t); err != nil {
					return err
				}
			}
			return writeComparison(e.stdout, c, tc, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output `format`: text, csv or json")
	cmd.Flags().StringVar(&model, "model", "", "L-OPP model `FILE` of a lopp run (default: the one in run.json)")
	cmd.Flags().StringVar(&tierName, "tier", "", tierUsage+": the model's stall beside the workload's touches")
	cmd.Flags().StringVar(&predictedFrom, "predicted-from", "", "recording `TRACE` (of an earlier run, mdk record): its prediction beside the counterfactual and the measurement, the difference split by cause")
	return cmd
}

// compareRun reads RUN's setting and compares. A setting or model that
// does not parse is RUN's damage (exit 1), not the command line's.
func compareRun(dir, model string) (*agent.Comparison, error) {
	s, a, err := runSetting(dir, model)
	if err != nil {
		return nil, err
	}
	if a != nil {
		return agent.CompareControlled(dir, a)
	}
	return agent.Compare(dir, s)
}

// compareRunPredicted is compareRun with the prediction of the recording
// (a trace file) beside it: mdk agent compare RUN --predicted-from.
func compareRunPredicted(dir, model, recording string) (*agent.Predicted, error) {
	s, a, err := runSetting(dir, model)
	if err != nil {
		return nil, err
	}
	rd, c, err := trace.Open(recording)
	if err != nil {
		return nil, err
	}
	rec, err := trace.ReadAll(rd)
	c.Close()
	if err != nil {
		return nil, err
	}
	if a != nil {
		return agent.ComparePredictedControlled(dir, recording, rec, a)
	}
	return agent.ComparePredicted(dir, recording, rec, s)
}

// runSetting reads RUN's setting: a fixed setting, or a controller (then
// the setting is nil). A setting or model that does not parse is RUN's
// damage (exit 1), not the command line's.
func runSetting(dir, model string) (policy.Setting, policy.Controller, error) {
	info, err := agent.ReadRunInfo(dir)
	if err != nil {
		return nil, nil, err
	}
	meta := filepath.Join(dir, agent.MetaFile)
	var m policy.Scorer
	if model != "" {
		if m, err = loadModel(model); err != nil {
			return nil, nil, err
		}
	} else if info.Model != "" {
		if m, err = loadModel(info.Model); err != nil {
			return nil, nil, fmt.Errorf("%s: model %s: %w", meta, info.Model, errors.Unwrap(err))
		}
	}
	if tune.IsController(info.Setting) {
		a, err := parseAgentController(info.Setting, info.WindowLength(), info.Model, "")
		if err != nil {
			return nil, nil, fmt.Errorf("%s: setting %q: %w", meta, info.Setting, err)
		}
		return nil, a, nil
	}
	ss, err := policy.ParseSpecs([]string{info.Setting}, info.WindowLength(), policy.SpecOptions{Model: m})
	if err == nil && len(ss) != 1 {
		err = fmt.Errorf("%d settings, a run has one", len(ss))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: setting %q: %w", meta, info.Setting, err)
	}
	return ss[0], nil, nil
}

// formatWriter is a result agent compare prints in each of its formats.
type formatWriter interface {
	WriteText(io.Writer) error
	WriteCSV(io.Writer) error
	WriteJSON(io.Writer) error
}

// writeFormat prints v in format: text, csv or json.
func writeFormat(w io.Writer, v formatWriter, format string) error {
	switch format {
	case "text":
		return v.WriteText(w)
	case "csv":
		return v.WriteCSV(w)
	case "json":
		return v.WriteJSON(w)
	}
	return usagef("--format %q: expected text, csv or json", format)
}

// writeComparison prints c in format, with its tier section tc if not nil.
func writeComparison(w io.Writer, c *agent.Comparison, tc *agent.TierComparison, format string) error {
	if tc != nil && (format == "text" || format == "csv" || format == "json") {
		return c.WriteTier(w, tc, format)
	}
	return writeFormat(w, c, format)
}

// agentView is the report's view of a comparison.
func agentView(dir string, c *agent.Comparison) *report.AgentRun {
	a := &report.AgentRun{Dir: dir, Setting: c.Info.Setting, Tracker: c.Info.Tracker, Kernel: c.Info.Kernel, Explain: c.Explain(), Memory: &c.Memory}
	for _, d := range c.Windows {
		a.PredPromotions = append(a.PredPromotions, d.PredPromotions)
		a.Promotions = append(a.Promotions, d.Promotions)
		a.PredSaved = append(a.PredSaved, d.PredSaved)
		a.Saved = append(a.Saved, d.Saved)
	}
	p, m := c.Predicted, c.Measured
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	f := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 4, 64) + "%" }
	a.Totals = [][3]string{
		{"pages decided", i(c.Total.PredDecided), i(c.Total.Decided)},
		{"promotions", i(p.TotalPromotions()), i(m.TotalPromotions())},
		{"saved page-windows", i(p.Saved), i(m.Saved)},
		{"max_pr", f(p.MaxPR()), f(m.MaxPR())},
		{"p99_pr", f(p.Percentile(99)), f(m.Percentile(99))},
		{"mean_pr", f(p.MeanPR()), f(m.MeanPR())},
		{"savings", f(p.Savings()), f(m.Savings())},
	}
	return a
}

// parseAgentController parses a controller for the agent: senpai with its
// tier (or the swapin_ns of a recorded setting), auto, or gswap or damos. A
// tier is refused otherwise (auto's slowdown SLO, damos's psi goal):
// run.json does not record a tier for compare to repeat it.
func parseAgentController(spec string, window time.Duration, model, tierName string) (policy.Controller, error) {
	if policy.IsSenpai(spec) {
		return parseController(spec, window, tierName, model)
	}
	if !tune.IsAuto(spec) {
		return parseController(spec, window, "", "")
	}
	a, err := tune.ParseAuto(spec, window)
	if err != nil {
		return nil, usageError{err}
	}
	if a.SLO.IsTier() {
		return nil, usagef("--policy %s: the agent's auto takes a promotion-rate SLO (max_pr, p99_pr, p98_pr, mean_pr), not the tier model's slowdown", spec)
	}
	return parseAuto(spec, window, "", model)
}
