package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"mdk/trace"
	"mdk/verify"
)

func newVerifyCmd(e *env) *cobra.Command {
	var policies []string
	var model string
	cmd := &cobra.Command{
		Use:   "verify TRACE",
		Short: "Check the one-pass generator against the reference simulator on a trace",
		Long: `Verify runs every setting through both engines, the one-pass curve
generator (mdk mpc) and the reference simulator (mdk sim), and reports any
difference in any per-window number. It also checks, per policy, the MDK
paper's nesting properties on this trace: eviction decisions (a more
aggressive setting reclaims every gap a less aggressive one does) and
eviction times (and at the same time). Expect vmin and opp to have both and
age only the first.

The simulator holds the trace and its gaps in memory and runs every setting
side by side in one pass, with a few bytes per page and setting: memory does
not grow with the number of settings times the trace's length. It is slow on
purpose (it visits every alive page of every window for every setting): about
12 million alive page-windows x settings per CPU-second, so the README's trace
(mdk gen --model mix --seed 7: 4.45 million records, 21.2 million alive
page-windows) with the 297 settings the default grids had then took about 9
CPU-minutes, on two cores about 5 minutes, in 622 MB (docs/bench.md); the time
grows with the settings, and since paw and pace sweep their whole ladders
(1061 settings) it is about 31 CPU-minutes at that rate. Exits 3 when the engines differ.`,
		Example: `  mdk verify testdata/example.txt
  mdk verify trace.mdkt -p 'age:A=0..30' -p opp`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, c, err := e.openTrace(args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			ss, err := parseSpecs(policies, r.Header().Window, model)
			if err != nil {
				return err
			}
			t, err := trace.ReadAll(r)
			if err != nil {
				return err
			}
			var progress func(stage string, done, total int)
			gen, sim := e.progress("verify: generator"), e.progress("verify: simulator")
			if gen != nil {
				progress = func(stage string, done, total int) {
					if stage == "generator" {
						gen(done, total)
					} else {
						sim(done, total)
					}
				}
			}
			rep, err := verify.RunProgress(e.ctx, t, ss, progress)
			e.endProgress()
			if err != nil {
				return err
			}
			yes := map[bool]string{true: "yes", false: "no"}
			fmt.Fprintf(e.stdout, "%d settings, %d windows: ", rep.Settings, len(t.Windows))
			if len(rep.Diffs) == 0 {
				fmt.Fprintln(e.stdout, "generator equals simulator on every setting")
			} else {
				fmt.Fprintf(e.stdout, "%d settings differ\n", len(rep.Diffs))
				for _, d := range rep.Diffs {
					fmt.Fprintf(e.stdout, "  %s: %s\n", d.Setting, d.What)
				}
			}
			fmt.Fprintln(e.stdout, "policy  settings  eviction-decisions  eviction-times")
			for _, p := range rep.Properties {
				fmt.Fprintf(e.stdout, "%-6s  %8d  %-18s  %s\n", p.Policy, p.Settings, yes[p.Decisions], yes[p.Times])
				if p.Witness != "" {
					fmt.Fprintf(e.stdout, "        (%s)\n", p.Witness)
				}
			}
			if len(rep.Diffs) > 0 {
				return exitError{ExitDiffer, fmt.Errorf("%d settings differ between the engines", len(rep.Diffs))}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&policies, "policy", "p", nil, "policy `spec` (repeatable); none: every policy's default grid")
	cmd.Flags().StringVar(&model, "model", "", "L-OPP model `FILE` (from mdk lopp train) for lopp settings")
	return cmd
}
