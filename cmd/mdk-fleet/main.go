// Command mdk-fleet runs `mdk fleet` as an Apache Beam pipeline: on Beam's
// prism runner in this process by default, or on Flink, Spark or Dataflow
// with Beam's usual flags (--runner, --endpoint, --environment_type, ...).
// docs/fleet.md has the commands. It takes mdk fleet's command line (flags
// before or after the arguments, -p, -o); Beam's own flags may be mixed in
// and are listed by --help-beam. Beam logs at warning level unless
// --log-level says otherwise.
//
//	mdk-fleet (TRACE-LIST | GLOB | TRACE)... -o DIR [-p SPEC]... [--slo 'STAT<=RATE'] [beam flags]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/spf13/pflag"

	"mdk/fleet"
	fleetbeam "mdk/fleet/beam"
	"mdk/tier"
)

// splitArgs separates Beam's flags (those of the standard flag package's
// command line, which Beam registers) from mdk-fleet's own.
func splitArgs(fs *pflag.FlagSet, args []string) (own, beamArgs []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(own, args[i:]...), beamArgs
		}
		if len(a) > 1 && a[0] == '-' {
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			mine := fs.Lookup(name) != nil || (len(name) == 1 && fs.ShorthandLookup(name) != nil)
			if f := flag.CommandLine.Lookup(name); f != nil && !mine {
				beamArgs = append(beamArgs, a)
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) && i+1 < len(args) {
					i++
					beamArgs = append(beamArgs, args[i])
				}
				continue
			}
		}
		own = append(own, a)
	}
	return own, beamArgs
}

func main() {
	fs := pflag.NewFlagSet("mdk-fleet", pflag.ContinueOnError)
	policies := fs.StringArrayP("policy", "p", nil, "policy `spec` (repeatable); none: age, vmin, opp, paw and pace over their default grids")
	slo := fs.String("slo", "", "service-level objective `STAT<=RATE`, such as 'max_pr<=2%'")
	out := fs.StringP("out", "o", "", "output `DIR` or URL (required)")
	window := fs.String("window", "", "window `length` of every trace (default: the first trace's)")
	tierName := fs.String("tier", "", "far tier `NAME|FILE` (cxl, ssd, zram, zswap or a tier file from mdk calibrate): net bytes freed and slowdown (docs/tiers.md)")
	model := fs.String("model", "", "L-OPP model `FILE` (mdk lopp train) for lopp specs, the same for every job, shipped to the workers in the config")
	split := fs.Int("split", 0, "cut each partitioned trace (mdk convert --partitions) into at most `N` pieces of its partitions, walked by separate workers and merged exactly (0: a piece per partition; 1: whole traces)")
	logLevel := fs.String("log-level", "warn", "Beam's log `level`: debug, info, warn or error")
	helpBeam := fs.Bool("help-beam", false, "list Beam's flags (--runner, --endpoint, ...) and exit")
	// mdk fleet's flags that mean nothing on Beam, accepted so that its
	// command lines run as they are.
	fs.Int("workers", 0, "ignored: the Beam runner schedules the jobs")
	fs.Bool("local", false, "ignored: mdk-fleet always runs on Beam")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: mdk-fleet (TRACE-LIST | GLOB | TRACE)... -o DIR [flags] [beam flags]\n\nThe fleet view of docs/fleet.md (the command line of mdk fleet), on Apache Beam\n(default runner: prism, in this process). --help-beam lists Beam's flags.\n\n%s", fs.FlagUsages())
	}
	own, beamArgs := splitArgs(fs, os.Args[1:])
	if err := fs.Parse(own); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "mdk-fleet: %v (see mdk-fleet --help)\n", err)
		os.Exit(2)
	}
	if *helpBeam {
		flag.CommandLine.SetOutput(os.Stdout)
		fmt.Println("Beam's flags (give them to mdk-fleet as they are):")
		flag.CommandLine.PrintDefaults()
		os.Exit(0)
	}
	if err := flag.CommandLine.Parse(beamArgs); err != nil {
		os.Exit(2)
	}
	beamlog.LogLevel = *logLevel
	beam.Init() // a worker started with this binary runs its harness here and exits

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *out == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "mdk-fleet: need -o DIR and at least one TRACE-LIST, GLOB or TRACE (see mdk-fleet --help)")
		os.Exit(2)
	}
	jobs, err := fleetbeam.Source(ctx).Expand(fs.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "mdk-fleet: %v\n", err)
		os.Exit(2)
	}
	cfg := fleet.Config{Policies: *policies, SLO: *slo}
	if *model != "" {
		if cfg.Model, err = os.ReadFile(*model); err != nil {
			fmt.Fprintf(os.Stderr, "mdk-fleet: --model: %v\n", err)
			os.Exit(2)
		}
	}
	if *tierName != "" {
		if cfg.Tier, err = tier.Load(*tierName); err != nil {
			fmt.Fprintf(os.Stderr, "mdk-fleet: --tier: %v\n", err)
			os.Exit(2)
		}
	}
	if *window != "" {
		if cfg.Window, err = time.ParseDuration(*window); err != nil || cfg.Window <= 0 {
			fmt.Fprintf(os.Stderr, "mdk-fleet: --window %q: want a positive duration such as 30s\n", *window)
			os.Exit(2)
		}
	} else if cfg.Window, err = fleet.DetectWindow(ctx, jobs, fleetbeam.Open); err != nil {
		fmt.Fprintf(os.Stderr, "mdk-fleet: %v\n", err)
		os.Exit(1)
	}
	if fs.Changed("split") && *split != 1 {
		if plan, err := cfg.Compile(); err == nil && plan.SplitReason() != "" {
			fmt.Fprintf(os.Stderr, "mdk-fleet: note: --split: partitioned traces run whole (%s)\n", plan.SplitReason())
		}
	}
	p, s := beam.NewPipelineWithRoot()
	if err := fleetbeam.Build(s, cfg, jobs, *out, *split); err != nil {
		fmt.Fprintf(os.Stderr, "mdk-fleet: %v\n", err)
		os.Exit(2)
	}
	if err := beamx.Run(ctx, p); err != nil {
		fmt.Fprintf(os.Stderr, "mdk-fleet: %v\n", err)
		if ctx.Err() != nil {
			os.Exit(130)
		}
		os.Exit(1)
	}
	if b, err := fleetbeam.Source(ctx).ReadAll(strings.TrimSuffix(*out, "/") + "/summary.txt"); err == nil {
		os.Stdout.Write(b)
	}
}
