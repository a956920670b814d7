package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
	"mdk/tune"
)

type simOptions struct {
	json, csv bool
	model     string
	tier      string
}

func newSimCmd(e *env) *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use:   "sim TRACE SPEC",
		Short: "Run the reference simulator for a policy setting (or a grid of them)",
		Long: `Sim runs the reference simulator: the policy decides, window by window,
which resident pages to reclaim, exactly as SPEC sections 1-2 define. It is
the ground truth that the fast engines are checked against, and it is slow:
it holds the whole trace in memory and visits every alive page each window.
Use mdk mpc for curves.

SPEC is a policy spec (see docs/policies.md): NAME:KEY=VALUE,... with
durations converted by the trace's window length. One setting prints its
metrics; a grid (lists or ranges) prints CSV rows with the SPEC section 6
header. --json prints SPEC section 6 objects with per-window arrays.

SPEC may also be a controller, auto:BASE,slo=STAT<=RATE,..., gswap[:...] (a
cold-age threshold from the promotion history) or damos[:...] (DAMOS pageout
under a quota) (docs/policies.md, "Controllers"): it is simulated window by
window, retuning as it goes, and
its metrics are printed with every switch of its setting; --json adds
"settings" (the setting of every window) and "switches".`,
		Example: `  mdk sim testdata/example.txt age:A=1
  mdk sim trace.mdkt 'age:A=1m' --json
  mdk sim trace.txt 'pace:P=2..6/2,A=1|2'
  mdk sim trace.mdkt 'auto:paw,slo=max_pr<=2%,history=20,every=5'`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runSim(e, o, args[0], args[1]) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON objects with per-window arrays")
	cmd.Flags().BoolVar(&o.csv, "csv", false, "print CSV even for a single setting")
	cmd.Flags().StringVar(&o.model, "model", "", "L-OPP model `FILE` (from mdk lopp train) for lopp settings")
	cmd.Flags().StringVar(&o.tier, "tier", "", tierUsage+"; for an auto controller's slowdown SLO")
	return cmd
}

func runSim(e *env, o simOptions, path, spec string) error {
	r, c, err := e.openTrace(path)
	if err != nil {
		return err
	}
	defer c.Close()
	if tune.IsController(spec) {
		return runSimAuto(e, o, r, spec)
	}
	m, err := loadModel(o.model)
	if err != nil {
		return err
	}
	ss, err := policy.ParseSpecs([]string{spec}, r.Header().Window, policy.SpecOptions{Model: m})
	if err != nil {
		return usageError{err}
	}
	t, err := trace.ReadAll(r)
	if err != nil {
		return err
	}
	var rs []*result.Result
	for _, s := range ss {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		r := sim.Run(t, s)
		if sm := t.Header.Sample; !sm.All() {
			r = r.Scaled(sm.Scale(), sm.PPM) // a sampled trace: counts x 1/rate
		}
		rs = append(rs, r)
	}
	if sm := t.Header.Sample; !sm.All() {
		fmt.Fprintf(e.stderr, "mdk: the trace is a %s sample of the pages: counts are the sample's x %d; no error bounds (mdk mpc gives them)\n", sm, sm.Scale())
	}
	switch {
	case o.json && len(rs) == 1:
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rs[0].Record(true))
	case o.json:
		return result.WriteJSON(e.stdout, rs, true)
	case o.csv || len(rs) > 1:
		return result.WriteCSV(e.stdout, rs)
	}
	return writeRunText(e, rs[0], t.Header)
}

// writeRunText prints one run's metrics for a person.
func writeRunText(e *env, r *result.Result, h trace.Header) error {
	rec := r.Record(false)
	var b strings.Builder
	fmt.Fprintf(&b, "policy              %s:%s\n", r.Policy, r.Params)
	fmt.Fprintf(&b, "windows             %d of %s\n", r.Windows(), trace.FormatDuration(h.Window))
	fmt.Fprintf(&b, "promotions          %d\n", rec.Promotions)
	fmt.Fprintf(&b, "max_pr              %s\n", result.FormatFloat(float64(rec.MaxPR)))
	fmt.Fprintf(&b, "p99_pr              %s\n", result.FormatFloat(float64(rec.P99PR)))
	fmt.Fprintf(&b, "p98_pr              %s\n", result.FormatFloat(float64(rec.P98PR)))
	fmt.Fprintf(&b, "mean_pr             %s\n", result.FormatFloat(float64(rec.MeanPR)))
	fmt.Fprintf(&b, "saved page-windows  %d of %d alive (savings %.2f%%)\n", r.Saved, r.Alive, 100*r.Savings())
	fmt.Fprintf(&b, "avg saved bytes     %s\n", result.FormatFloat(float64(rec.AvgSavedBytes)))
	fmt.Fprintf(&b, "promotions/window   %s\n", joinInts(r.Promotions))
	fmt.Fprintf(&b, "accessed/window     %s\n", joinInts(r.Accessed))
	_, err := fmt.Fprint(e.stdout, b.String())
	return err
}

func joinInts(xs []int64) string {
	const max = 40
	var parts []string
	for i, x := range xs {
		if i == max {
			parts = append(parts, fmt.Sprintf("... (%d more)", len(xs)-max))
			break
		}
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, " ")
}

// parseAuto parses an auto controller spec for a trace with the given
// window, with its tier (for a slowdown SLO) and L-OPP model (for lopp).
func parseAuto(spec string, window time.Duration, tierName, model string) (*tune.Auto, error) {
	a, err := tune.ParseAuto(spec, window)
	if err != nil {
		return nil, usageError{err}
	}
	t, err := loadTier(tierName)
	if err != nil {
		return nil, err
	}
	if err := setSLOTier(&a.SLO, t); err != nil {
		return nil, err
	}
	m, err := loadModel(model)
	if err != nil {
		return nil, err
	}
	ss := a.Settings()
	if err := policy.AttachModel(ss, m); err != nil {
		return nil, usageError{err}
	}
	for i, s := range ss {
		a.Grid[i] = s.(policy.Online)
	}
	return a, nil
}

// parseController parses any controller spec (auto, or one of the policy
// package's: gswap, damos, senpai) for a trace with the given window, with
// its tier (senpai's pressure and damos's psi goal are modelled on it) and
// L-OPP model.
func parseController(spec string, window time.Duration, tierName, model string) (policy.Controller, error) {
	if tune.IsAuto(spec) {
		return parseAuto(spec, window, tierName, model)
	}
	t, err := loadTier(tierName)
	if err != nil {
		return nil, err
	}
	c, err := tune.ParseController(spec, window, t)
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}

// runSimAuto simulates a controller.
func runSimAuto(e *env, o simOptions, r trace.Reader, spec string) error {
	a, err := parseController(spec, r.Header().Window, o.tier, o.model)
	if err != nil {
		return err
	}
	t, err := trace.ReadAll(r)
	if err != nil {
		return err
	}
	if !t.Header.Sample.All() {
		return usagef("%s: a controller needs a trace of every page, not a %s sample", spec, t.Header.Sample)
	}
	c, err := sim.RunControlled(e.ctx, t, a)
	if err != nil {
		return err
	}
	if o.json || o.csv {
		if o.csv {
			return result.WriteCSV(e.stdout, []*result.Result{c.Result})
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			result.Record
			Settings []string        `json:"settings"`
			Switches []policy.Switch `json:"switches"`
		}{c.Result.Record(true), c.Settings, c.Switches})
	}
	if err := writeRunText(e, c.Result, t.Header); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "switches            %d\n", len(c.Switches))
	for _, sw := range c.Switches {
		fmt.Fprintf(&b, "  end of window %-5d %s -> %s\n", sw.Window, sw.From, sw.To)
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}
