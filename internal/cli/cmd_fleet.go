package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"mdk/fleet"
	"mdk/gbdt"
	"mdk/internal/outfile"
	"mdk/policy"
)

type fleetOptions struct {
	policies []string
	slo      string
	out      string
	local    bool
	workers  int
	window   string
	tier     string
	model    string
	sample   sampleOptions
}

func newFleetCmd(e *env) *cobra.Command {
	var o fleetOptions
	cmd := &cobra.Command{
		Use:   "fleet (TRACE-LIST | GLOB | TRACE)... -o DIR [--policy SPEC]... [--slo 'STAT<=RATE']",
		Short: "Curves and tuning across many traces, and the fleet view",
		Long: `Fleet runs every policy setting over every trace of a fleet of jobs (one
trace per job, one pass each) and writes the fleet view to DIR:

  fleet.json    totals, the per-setting and per-policy rows below, as JSON
  settings.csv  per setting, applied to every job: Σ average saved bytes over
                Σ footprint (peak alive bytes), and, with --slo, the jobs
                whose statistic breaks the SLO (whole traces, training and
                evaluation windows)
  policies.csv  with --slo, per policy on the evaluation windows: each job
                its own tuned setting vs one setting for all vs OPP per job
  jobs.csv      per job (and policy): footprint, chosen setting, savings,
                statistic, whether it breaks; a failed job with its error
  jobs.json     the same with every tuning detail
  curves.csv    every job's curve: the job, then mdk mpc's columns

With --tier (a built-in tier or a tier file from mdk calibrate), settings.csv
and policies.csv gain the net saved bytes (what the fleet frees after the
tier's own memory), and settings.csv the jobs' stall seconds per second and
slowdown; the summary prints the fleet's net GiB freed (docs/tiers.md).

Arguments are traces, globs ('traces/*.mdkt', quoted) or job lists (one trace
path per line, # comments). Tuning follows mdk tune's rules: the first half
of each trace's windows trains, the second evaluates. Every trace must have
the window length the policy specs are read with (--window, default: the
first trace's). A job that fails (unreadable or corrupt trace) is reported in
jobs.csv with its error and does not stop the others; when every job
fails, the files are written and mdk exits 1.

A controller spec among the policies (-p 'auto:age,slo=max_pr<=2%',
docs/policies.md) runs on every job over its whole trace (the simulator,
the trace held in memory): settings.csv gets a row per controller after the
settings, the sums of the jobs' realised points (whole traces and, with
--slo, each part), curves.csv each job's point, and the summary a line per
controller with its switches.

This command runs the jobs on a pool of goroutines on this machine (--local).
The same computation on Apache Beam (prism locally, Flink, Spark, Dataflow)
is the separate mdk-fleet binary; its results are identical. docs/fleet.md
has the definitions and the commands.`,
		Example: `  mdk fleet 'traces/*.mdkt' -p age -p pace --slo 'max_pr<=2%' -o fleet-out
  mdk fleet jobs.txt -p 'age:A=1..60' -o curves-out --workers 2
  mdk fleet 'traces/*.mdkt' -p age -p 'auto:age,slo=max_pr<=2%' --slo 'max_pr<=2%' -o fleet-out`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("fleet needs a TRACE-LIST, a GLOB or traces (see mdk fleet --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runFleet(e, o, args) },
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&o.policies, "policy", "p", nil, "policy or controller `spec` (repeatable); none: age, vmin, opp, paw and pace over their default grids")
	fl.StringVar(&o.slo, "slo", "", "service-level objective `STAT<=RATE`, such as 'max_pr<=2%': tune every job and count breaking jobs")
	fl.StringVarP(&o.out, "out", "o", "", "output `DIR` (created if missing; required)")
	fl.BoolVar(&o.local, "local", true, "run on this machine with goroutines (the only mode of mdk; mdk-fleet runs on Beam)")
	fl.IntVar(&o.workers, "workers", 0, "jobs run at once (`N`; 0: one per CPU)")
	o.sample.addFlags(fl)
	fl.StringVar(&o.window, "window", "", "window `length` of every trace (default: the first trace's)")
	fl.StringVar(&o.tier, "tier", "", tierUsage+"; the fleet's net GiB freed")
	fl.StringVar(&o.model, "model", "", "L-OPP model `FILE` (mdk lopp train) for lopp specs, the same for every job; with no -p, lopp joins the default policies")
	return cmd
}

func runFleet(e *env, o fleetOptions, args []string) error {
	if o.out == "" {
		return usagef("fleet needs -o DIR")
	}
	if !o.local {
		return usagef("mdk fleet runs locally only; run the pipeline on Beam with mdk-fleet (docs/fleet.md)")
	}
	if o.workers < 0 {
		return usagef("--workers %d: want 0 (one per CPU) or more", o.workers)
	}
	jobs, err := fleet.LocalSource.Expand(args)
	if err != nil {
		return usageError{err}
	}
	cfg := fleet.Config{Policies: o.policies, SLO: o.slo}
	if cfg.Tier, err = loadTier(o.tier); err != nil {
		return err
	}
	if o.model != "" {
		if cfg.Model, err = os.ReadFile(o.model); err != nil {
			return err
		}
		if _, err := gbdt.ReadJSON(bytes.NewReader(cfg.Model)); err != nil {
			return fmt.Errorf("%s: %w", o.model, err)
		}
	}
	s, k, err := o.sample.parse()
	if err != nil {
		return err
	}
	cfg.SamplePPM, cfg.SampleSeed, cfg.SampleGroups = s.PPM, s.Seed, k
	if o.window != "" {
		if cfg.Window, err = time.ParseDuration(o.window); err != nil || cfg.Window <= 0 {
			return usagef("--window %q: want a positive duration such as 30s", o.window)
		}
	} else if cfg.Window, err = fleet.DetectWindow(e.ctx, jobs, fleet.OpenFile); err != nil {
		return err
	}
	plan, err := cfg.Compile()
	if err != nil {
		var se *policy.SpecError
		if errors.As(err, &se) {
			return usagef("--policy %v", err)
		}
		return usageError{err}
	}
	if err := os.MkdirAll(o.out, 0o777); err != nil {
		return err
	}
	f, err := plan.RunLocal(e.ctx, jobs, fleet.OpenFile, o.workers)
	if err != nil {
		return err
	}
	// All files or none: each is written beside its destination, and
	// renamed into place once every one is complete.
	var files []*outfile.File
	defer func() {
		for _, f := range files {
			f.Abort()
		}
	}()
	if err := f.WriteFiles(func(name string, data []byte) error {
		out, err := outfile.Create(filepath.Join(o.out, name))
		if err != nil {
			return err
		}
		files = append(files, out)
		_, err = out.Write(data)
		return err
	}); err != nil {
		return err
	}
	if err := outfile.CommitAll(files...); err != nil {
		return err
	}
	if err := f.WriteSummary(e.stdout); err != nil {
		return err
	}
	if f.Jobs > 0 && f.Failed == f.Jobs {
		return fmt.Errorf("fleet: every one of the %d jobs failed (their errors are in %s)", f.Jobs, filepath.Join(o.out, "jobs.csv"))
	}
	return nil
}
