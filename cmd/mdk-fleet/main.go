// Command mdk-fleet runs `mdk fleet` as an Apache Beam pipeline: on Beam's
// prism runner in this process by default, or on Flink, Spark or Dataflow
// with Beam's usual flags (--runner, --endpoint, --environment_type, ...).
// docs/fleet.md has the commands. Flags go before the arguments.
//
//	mdk-fleet [--policy SPEC]... [--slo 'STAT<=RATE'] --out DIR [beam flags] (TRACE-LIST | GLOB | TRACE)...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"mdk/fleet"
	fleetbeam "mdk/fleet/beam"
	"mdk/tier"
)

type specs []string

func (s *specs) String() string     { return strings.Join(*s, " ") }
func (s *specs) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var policies specs
	flag.Var(&policies, "policy", "policy `spec` (repeatable); none: age, vmin, opp, paw and pace over their default grids")
	slo := flag.String("slo", "", "service-level objective `STAT<=RATE`, such as 'max_pr<=2%'")
	out := flag.String("out", "", "output `DIR` or URL (required)")
	window := flag.String("window", "", "window `length` of every trace (default: the first trace's)")
	tierName := flag.String("tier", "", "far tier `NAME|FILE` (cxl, ssd, zram, zswap or a tier file from mdk calibrate): net bytes freed and slowdown (docs/tiers.md)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mdk-fleet [flags] (TRACE-LIST | GLOB | TRACE)...\n\nThe fleet view of docs/fleet.md, on Apache Beam (default runner: prism, in this process).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	beam.Init() // a worker started with this binary runs its harness here and exits

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "mdk-fleet: need --out DIR and at least one TRACE-LIST, GLOB or TRACE (flags before arguments)")
		os.Exit(2)
	}
	jobs, err := fleetbeam.Source(ctx).Expand(flag.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "mdk-fleet: %v\n", err)
		os.Exit(2)
	}
	cfg := fleet.Config{Policies: policies, SLO: *slo}
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
	p, s := beam.NewPipelineWithRoot()
	if err := fleetbeam.Build(s, cfg, jobs, *out); err != nil {
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
