package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"mdk/agent"
	"mdk/internal/outfile"
	"mdk/report"
	"mdk/result"
	"mdk/stats"
	"mdk/tier"
	"mdk/tune"
)

type reportOptions struct {
	mpc      mpcOptions
	out      string
	svgDir   string
	settings []string
	// --slo and the window split: a Tuning section (mdk tune's report).
	slo, trainWindows, evalWindows string
	// --design and --what-if: the design section (docs/headroom.md).
	design  bool
	whatIfs []string
	// --predicted-from: a RUN beside a recording's prediction.
	predictedFrom string
}

func newReportCmd(e *env) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:   "report (TRACE | RUN [--predicted-from RECORDING]) -o FILE.html",
		Short: "Write a self-contained HTML report: curves, best settings, timelines, working set",
		Long: `Report reads a trace, computes the memory performance curves of the
requested policies (default: every policy's default grid) and writes one
self-contained HTML file: every script and style is inside it, and it makes
no network request when opened (a Content-Security-Policy forbids them).

The report shows the trace's summary (as mdk stats), how the report was
made (command line, mdk version, SHA-256 of the trace file, date), the
curves of every policy (hover a point for its setting and numbers), each
policy's best setting at each --target with its savings, statistic and
headroom against OPP (a sortable table; the numbers are those of
mdk mpc --csv, which a second table lists for every setting), and, for each
--setting (default: each policy's best at the first target), the
per-window promotion rate against the target and its accessed, resident
(alive minus saved) and saved pages; then the accessed and alive pages per
window and the gap-length histogram.

Given the run directory RUN of mdk agent instead of a trace, the report is
that of the trace the agent observed (RUN/trace.mdkt), with an "Agent run"
section first: the simulator's prediction beside what the agent measured,
promotions and saved pages per window as a chart, the totals and the
explanation of every difference (as mdk agent compare RUN).

With --predicted-from RECORDING (the trace of an earlier run of the same
application, e.g. mdk record --pid), the report of RUN also has a
"Predicted from a recording" section drawing mdk agent compare RUN
--predicted-from RECORDING (the same computation; its JSON is embedded in
the page as #predicted-json): per window and in total, the recording's
prediction for the run's setting, the counterfactual (the simulator on the
trace observed during the run) and the measurement; the difference between
the first and the last split into time shift (with the best alignment
offset), workload change (with the per-window Jaccard of the accessed sets,
and the curves of both traces, the recording's computed with the same
--policy specs), refused pages, safety limits, pages swapped back in and
tracker slack; and the run's memory as the kernel counts it (the targets'
RSS and swap, the zram devices' own memory, net of compression).

Per-window charts of traces longer than 2000 windows are down-sampled for
display, keeping each bucket's minimum and maximum; no number in a table
changes. --svg DIR also writes every chart as an SVG figure.

With --slo 'STAT<=RATE' the report also has a Tuning section: mdk tune's
report on the same trace and the same --policy specs (and --model), split
by windows (default: the first half trains, the second half evaluates;
--train-windows and --eval-windows as in mdk tune). It shows which windows
trained and which evaluated and, per policy, the setting chosen on the
training windows with its savings and statistic there and on the
evaluation windows, the evaluation windows above the bound, a BROKEN badge
where the evaluation statistic breaks the SLO, and the OPP yardstick.

With --tier (a built-in tier or a tier file from mdk calibrate) the report
also draws each policy's net savings against its slowdown on that tier, and
its tables add the net savings and slowdown (docs/tiers.md). With --tier,
--x slowdown (or max_slowdown) puts --target on the tier's estimate: the
best-setting table adds, per policy, the setting with the most savings at
each "at most 1% slowdown" target (--x slowdown --target 1%; default
targets 0.5%,1%,2%,5%), after the rows at the default max_pr targets, which
the curves keep.

With a controller among the --policy specs (-p 'auto:paw,slo=max_pr<=2%'),
the report has a Controllers section: each controller's realised point
beside OPP and each fixed policy's best setting at the statistic it
realised ("auto:... saves A% at max_pr B%; OPP at B% saves C%; age at its
best, D%"), with the line mdk mpc prints for it and its switches.

With --design the report adds a design section (docs/headroom.md): each
policy's best setting at the first target compared gap by gap with OPP at
its own statistic (mdk headroom), as stacked bars of the headroom by cause
(waiting, missed, spent) and by memory region, and the curves of the same
policies on what-if traces (docs/whatif.md) beside the original: --what-if
'page-size=2M' or 'window-factor=4' (comma-separated to combine;
repeatable; default both of these). It holds the trace in memory and runs
the simulator twice per setting.

TRACE must be a file (it is read twice: once for the summary, once for the
curves; a third time with --slo).`,
		Example: `  mdk report trace.mdkt -o report.html
  mdk report trace.mdkt -p age -p 'opp:r=0%..5%/0.1%' --target 1%,2% --log-x -o report.html
  mdk report trace.mdkt --tier zram --x slowdown --target 0.1%,1% -o report.html
  mdk report trace.mdkt -o report.html --svg figures/ --setting age:A=20
  mdk report trace.mdkt -o report.html --slo 'max_pr<=2%' --train-windows 0..119
  mdk report run-paw --predicted-from yesterday.mdkt -p paw -o run-paw.html`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(e, o, args[0], commandLine(cmd, args))
		},
	}
	o.mpc.addFlags(cmd)
	cmd.Flags().BoolVar(&o.mpc.logX, "log-x", false, "logarithmic x axis for the curves")
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "write the report to `FILE` (required)")
	cmd.Flags().StringVar(&o.svgDir, "svg", "", "also write every chart as an SVG file into `DIR`")
	cmd.Flags().StringArrayVar(&o.settings, "setting", nil, "`policy:params` whose timeline to show (repeatable); default: each policy's best at the first target")
	cmd.Flags().StringVar(&o.slo, "slo", "", "add a Tuning section (mdk tune) for the SLO `STAT<=RATE`, such as 'max_pr<=2%'")
	cmd.Flags().StringVar(&o.trainWindows, "train-windows", "", "with --slo: training windows `FIRST..LAST` (inclusive)")
	cmd.Flags().StringVar(&o.evalWindows, "eval-windows", "", "with --slo: evaluation windows `FIRST..LAST` (inclusive)")
	cmd.Flags().BoolVar(&o.design, "design", false, "add the design section: headroom vs OPP by cause and region, what-if curves (docs/headroom.md)")
	cmd.Flags().StringVar(&o.predictedFrom, "predicted-from", "", "with a RUN: the recording `TRACE` of an earlier run, whose prediction the report sets beside the run (mdk agent compare --predicted-from)")
	cmd.Flags().StringArrayVar(&o.whatIfs, "what-if", nil, "with --design: a what-if `TRANSFORM` page-size=SIZE and/or window-factor=K (repeatable; default page-size=2M and window-factor=4)")
	return cmd
}

func runReport(e *env, o reportOptions, path string, cmdline string) error {
	if o.out == "" {
		return usagef("report needs -o FILE.html")
	}
	if err := outfile.Check(o.out); err != nil {
		return err
	}
	if path == "-" {
		return usagef("report reads the trace twice and needs a file, not standard input")
	}
	x, targets, err := o.mpc.parse()
	if err != nil {
		return err
	}
	if len(o.whatIfs) > 0 && !o.design {
		return usagef("--what-if needs --design")
	}
	for _, w := range o.whatIfs {
		if _, err := parseWhatIf(w); err != nil {
			return err
		}
	}
	// --x slowdown (or max_slowdown), with --tier: the targets are on the
	// tier's estimate and add rows to the best-setting table; the curves
	// stay on max_pr at the default targets.
	st := x.Stat
	var tierX tier.Metric
	var tierTargets []float64
	if x.IsTier() {
		tierX, tierTargets, targets = x.Metric, targets, nil
		if tierTargets == nil {
			tierTargets = result.DefaultTargets
		}
	}
	tr, err := loadTier(o.mpc.tier)
	if err != nil {
		return err
	}
	tcfg, err := o.tuneConfig()
	if err != nil {
		return err
	}
	if tcfg != nil {
		if err := setSLOTier(&tcfg.SLO, tr); err != nil {
			return err
		}
	}
	var agentRun *report.AgentRun
	var pred *report.PredictedRun
	fi, statErr := os.Stat(path)
	if statErr == nil && fi.IsDir() {
		var c *agent.Comparison
		if o.predictedFrom != "" {
			p, err := compareRunPredicted(path, o.mpc.model, o.predictedFrom)
			if err != nil {
				return err
			}
			pred, c = &report.PredictedRun{Dir: path, P: p}, p.Cmp
		} else if c, err = compareRun(path, o.mpc.model); err != nil {
			return err
		}
		agentRun = agentView(path, c)
		path = filepath.Join(path, agent.TraceFile)
	} else if o.predictedFrom != "" {
		if statErr != nil {
			return statErr
		}
		return usagef("--predicted-from needs a run directory of mdk agent, not the trace %s", path)
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return err
	}
	r, c, err := e.openTrace(path)
	if err != nil {
		return err
	}
	s, err := stats.Compute(r)
	c.Close()
	if err != nil {
		return err
	}
	rs, ctl, window, err := e.curveSet(path, o.mpc, x)
	if err != nil {
		return err
	}
	fmt.Fprint(e.stderr, sampleWarning(rs))
	if pred != nil {
		// The recording's curves, with the same specs.
		if pred.RecCurves, _, _, err = e.curveSet(o.predictedFrom, o.mpc, x); err != nil {
			return err
		}
	}
	data := &report.Data{
		Trace: path, SHA256: sum, Command: cmdline, Version: Version,
		Date: time.Now(), Stats: s, Results: rs, Tier: tr, Window: window, Agent: agentRun, Predicted: pred, Controllers: ctl,
	}
	if tcfg != nil {
		if data.Tune, err = e.tuneOne(path, *tcfg); err != nil {
			return err
		}
	}
	if o.design {
		if data.Design, err = e.design(path, o, rs, st, targets); err != nil {
			return err
		}
	}
	opts := report.Options{X: st, LogX: o.mpc.logX, Targets: targets, Settings: o.settings, TierX: tierX, TierTargets: tierTargets}
	if err := writeFile(o.out, func(w io.Writer) error { return report.Generate(w, data, opts) }); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "mdk: wrote %s\n", o.out)
	if o.svgDir != "" {
		paths, err := report.WriteSVGs(o.svgDir, data, opts)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "mdk: wrote %d figures into %s\n", len(paths), o.svgDir)
	}
	return nil
}

// tuneConfig parses --slo and the window split (nil without --slo), with
// the report's policies and model.
func (o reportOptions) tuneConfig() (*tune.Config, error) {
	if o.slo == "" {
		if o.trainWindows != "" || o.evalWindows != "" {
			return nil, usagef("--train-windows and --eval-windows need --slo")
		}
		return nil, nil
	}
	slo, err := tune.ParseSLO(o.slo)
	if err != nil {
		return nil, usagef("--slo: %v", err)
	}
	cfg := &tune.Config{SLO: slo, Policies: o.mpc.policies}
	if cfg.Sample, cfg.Groups, err = o.mpc.sample.parse(); err != nil {
		return nil, err
	}
	if cfg.Model, err = loadModel(o.mpc.model); err != nil {
		return nil, err
	}
	if err := parseWindowRanges(cfg, o.trainWindows, o.evalWindows); err != nil {
		return nil, err
	}
	return cfg, nil
}

// tuneOne runs tune.Run on the trace at path, split by windows.
func (e *env) tuneOne(path string, cfg tune.Config) (*tune.Report, error) {
	r, c, err := e.openTrace(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	cfg.Traces = []tune.Input{{Name: path, Reader: r}}
	if p := e.progress("tune"); p != nil {
		cfg.Progress = func(_ string, done, total int) { p(done, total) }
	}
	rep, err := tune.Run(e.ctx, cfg)
	e.endProgress()
	return rep, err
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// commandLine reconstructs the command line from the flags that were set,
// in a form that runs the same command again.
func commandLine(cmd *cobra.Command, args []string) string {
	argv := strings.Fields(cmd.CommandPath())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				argv = append(argv, "--"+f.Name, v)
			}
			return
		}
		if f.Value.Type() == "bool" {
			argv = append(argv, "--"+f.Name+"="+f.Value.String())
			return
		}
		argv = append(argv, "--"+f.Name, f.Value.String())
	})
	return shellJoin(append(argv, args...))
}

// shellJoin quotes args for a POSIX shell where needed.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,%+@") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
