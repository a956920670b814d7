package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mdk/gen"
	"mdk/mpc"
	"mdk/report"
	"mdk/result"
	"mdk/stats"
	"mdk/tier"
)

// demoParams make the demo's workload (mdk gen --model zipf --param ...):
// hot pages touched nearly every window, a warm middle whose gaps grow with
// rank, and a cold tail touched about once in the trace, so that every
// policy shows its character (TestDemoShowsEveryPolicy).
var demoParams = []string{"zipf.HotFraction=0.2", "zipf.HotProb=0.99", "zipf.Exponent=3", "zipf.ColdProb=0.001"}

func demoConfig(seed uint64) (gen.Config, error) {
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Seed = "zipf", seed
	for _, p := range demoParams {
		k, v, _ := strings.Cut(p, "=")
		if err := cfg.Set(k, v); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func newDemoCmd(e *env) *cobra.Command {
	var dir string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Compute the curves of every policy on a generated default trace",
		Long: `Demo shows mdk's main job in a few seconds, without any input: it
generates a synthetic trace (mdk gen's zipf model with a hot fifth of the
pages touched nearly every window, a warm middle and truly cold pages touched
once or twice in 2 hours of 30 s windows; the command is printed), computes
the memory performance curves of every policy in one pass (the default grids),
writes them as CSV, SVG and an HTML report (open it in a browser) into
DIR, and prints each policy's best setting at promotion-rate targets of 0.5%,
1%, 2% and 5% of max_pr.`,
		Example: `  mdk demo
  mdk demo --dir /tmp/mdk-demo --seed 7`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := demoConfig(seed)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			r := gen.NewReader(cfg)
			ss, err := parseSpecs(nil, cfg.Window, "")
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "demo trace: %s --param %s (%d windows of %s)\n", cfg.Header().Source, strings.Join(demoParams, " --param "), cfg.Windows, cfg.Window)
			rs, err := mpc.Generate(e.ctx, r, ss, mpc.Options{Progress: e.progress("demo")})
			e.endProgress()
			if err != nil {
				return err
			}
			csvPath := filepath.Join(dir, "curves.csv")
			if err := writeFile(csvPath, func(w io.Writer) error { return result.WriteCSV(w, rs) }); err != nil {
				return err
			}
			svgPath := filepath.Join(dir, "curves.svg")
			if err := writePlotFile(svgPath, rs, result.MaxPR, false, []float64{0.01, 0.02}); err != nil {
				return err
			}
			st, err := stats.Compute(gen.NewReader(cfg))
			if err != nil {
				return err
			}
			htmlPath := filepath.Join(dir, "report.html")
			data := &report.Data{
				Trace: "generated: " + cfg.Header().Source, Command: "mdk demo", Version: Version,
				Date: time.Now(), Stats: st, Results: rs,
			}
			if err := writeFile(htmlPath, func(w io.Writer) error { return report.Generate(w, data, report.Options{}) }); err != nil {
				return err
			}
			if err := report.WriteBestTable(e.stdout, rs, report.TableOptions{X: tier.StatAxis(result.MaxPR), Targets: result.DefaultTargets}); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "\n%d settings of 5 policies in one pass.\nwrote %s\nwrote %s\nwrote %s (open it in a browser)\n", len(rs), csvPath, svgPath, htmlPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "mdk-demo", "`directory` for the output files")
	cmd.Flags().Uint64Var(&seed, "seed", gen.DefaultConfig.Seed, "seed of the generated trace")
	return cmd
}
