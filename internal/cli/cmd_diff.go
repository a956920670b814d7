package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"mdk/report"
	"mdk/result"
	"mdk/stats"
)

type diffOptions struct {
	mpc       mpcOptions
	perWindow bool
	json      bool
}

func newDiffCmd(e *env) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two traces of the same run: per-window Jaccard of the accessed sets, and the curves",
		Long: `Diff compares two traces of one run (idle page tracking beside DAMON, an
exact trace beside a sampled or coarsened one; docs/whatif.md). Pages are
matched by name (space, page); page sizes and window lengths must be equal
(mdk convert --page-size and --window-factor make them so), and a window
one trace lacks counts as empty in it.

It prints the windows, the distinct pages accessed in each and in both, the
accessed page-windows, and the Jaccard index |A_w ∩ B_w| / |A_w ∪ B_w| of
each window (1 where both are empty): its mean, its minimum, and overall
(sums of intersections over sums of unions). Then the difference of the
curves: for every policy (-p, as in mdk mpc; default every policy's
default grid) and target, the best setting on A and on B, B's savings minus
A's, and what A's choice does on B. --per-window prints every window's
Jaccard index; --json the whole comparison.`,
		Example: `  mdk diff idle.mdkt damon.mdkt
  mdk diff exact.mdkt exact-x4.mdkt -p age -p opp --target 2%`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runDiff(e, o, args[0], args[1]) },
	}
	o.mpc.addFlags(cmd)
	cmd.Flags().BoolVar(&o.perWindow, "per-window", false, "print every window's Jaccard index")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the comparison as JSON")
	return cmd
}

func runDiff(e *env, o diffOptions, a, b string) error {
	if o.mpc.tier != "" || o.mpc.sample.rate != "" {
		return usagef("diff takes neither --tier nor --sample")
	}
	x, targets, err := o.mpc.parse()
	if err != nil {
		return err
	}
	st := x.Stat // diff takes no --tier
	if sameFile(a, b) || a == "-" && b == "-" {
		return usagef("diff: A and B are the same file %s", a)
	}
	ra, ca, err := e.openTrace(a)
	if err != nil {
		return err
	}
	defer ca.Close()
	rb, cb, err := e.openTrace(b)
	if err != nil {
		return err
	}
	defer cb.Close()
	d, err := stats.CompareTraces(ctxReader{ra, e.ctx}, ctxReader{rb, e.ctx})
	if err != nil {
		return fmt.Errorf("diff %s %s: %w", a, b, err)
	}
	curves := [2][]*result.Result{}
	for i, path := range []string{a, b} {
		if curves[i], err = e.curves(path, o.mpc, x); err != nil {
			return err
		}
	}
	type row struct {
		Policy string  `json:"policy"`
		Target float64 `json:"target"`
		A      string  `json:"a_setting"`
		SavA   float64 `json:"a_savings"`
		B      string  `json:"b_setting"`
		SavB   float64 `json:"b_savings"`
		AOnB   float64 `json:"a_setting_on_b_savings"`
		AOnBX  float64 `json:"a_setting_on_b_stat"`
	}
	var rows []row
	ca0, cb0 := result.Choose(curves[0], st, targets), result.Choose(curves[1], st, targets)
	for i, c := range ca0 {
		cB := cb0[i]
		if c.Best == nil || cB.Best == nil {
			continue
		}
		r := row{Policy: c.Policy, Target: c.Target, A: c.Best.Params, SavA: c.Best.Savings(), B: cB.Best.Params, SavB: cB.Best.Savings()}
		for _, x := range curves[1] {
			if x.Policy == c.Policy && x.Params == c.Best.Params {
				r.AOnB, r.AOnBX = x.Savings(), x.Stat(st)
			}
		}
		rows = append(rows, r)
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*stats.Diff
			Stat   result.Stat `json:"stat"`
			Curves []row       `json:"curves"`
		}{d, st, rows})
	}
	fmt.Fprintf(e.stdout, "windows     A %d, B %d\n", d.Windows[0], d.Windows[1])
	fmt.Fprintf(e.stdout, "pages       A %d, B %d, both %d (accessed, matched by name)\n", d.Pages[0], d.Pages[1], d.Common)
	fmt.Fprintf(e.stdout, "accessed    A %d, B %d, both %d page-windows\n", d.Accessed[0], d.Accessed[1], d.Both)
	fmt.Fprintf(e.stdout, "jaccard     mean %.4f, min %.4f, overall %.4f\n", d.MeanJaccard(), d.MinJaccard(), d.Overall())
	if o.perWindow {
		for w, j := range d.Jaccard {
			fmt.Fprintf(e.stdout, "  window %d  %.4f\n", w, j)
		}
	}
	fmt.Fprintln(e.stdout)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "policy\ttarget %s\tbest on A\tsavings A\tbest on B\tsavings B\tB - A\tA's on B\t%s\n", st, st)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f%%\t%s\t%.2f%%\t%+.2f pts\t%.2f%%\t%.4f%%\n", r.Policy, report.FormatTarget(r.Target),
			r.A, 100*r.SavA, r.B, 100*r.SavB, 100*(r.SavB-r.SavA), 100*r.AOnB, 100*r.AOnBX)
	}
	return tw.Flush()
}
