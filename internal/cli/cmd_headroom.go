package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"mdk/headroom"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

type headroomOptions struct {
	policy, vs string
	x          string
	json       bool
	top        int
	model      string
	maps       string
}

func newHeadroomCmd(e *env) *cobra.Command {
	var o headroomOptions
	cmd := &cobra.Command{
		Use:   "headroom TRACE -p SETTING",
		Short: "Split a setting's gap to OPP (or to another setting) into its causes, gap by gap",
		Long: `Headroom runs a policy setting and a reference side by side in the reference
simulator and compares them gap by gap (docs/headroom.md). The reference
is --vs, by default OPP at the setting's own realised statistic (--x,
max_pr unless given; the largest rate in ppm not above it), so both spend
the same promotion budget.

Every gap falls in exactly one class: reclaimed by both at the same window;
by both, the setting later (savings lost to waiting); by both, the setting
earlier (never against OPP); by the reference only (missed); by the setting
only (spent: promotions where the reference would not); by neither. The
classes' savings and promotions add up exactly to the two runs' totals
(checked on every run). The missed, later and spent gaps are then split by
the prior reuse distance at the touch, the idle length, the life's age and
number of touches, the window, the address space and the memory region:
the mappings of the trace's sidecar TRACE.maps (docs/trace-format.md;
--maps names another file), else address ranges (the
pages of a space cut at holes of 1 MiB or more).

It holds the trace in memory, as mdk sim does.`,
		Example: `  mdk headroom testdata/example.txt -p age:A=1
  mdk headroom trace.mdkt -p 'paw:P=4,wait=2' --vs opp:r=2%
  mdk headroom trace.mdkt -p age:A=10 --vs 'pace:P=8,A=10' --json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runHeadroom(e, o, args[0]) },
	}
	cmd.Flags().StringVarP(&o.policy, "policy", "p", "", "the policy `SETTING` compared (one setting, required)")
	cmd.Flags().StringVar(&o.vs, "vs", "", "the reference `SETTING`; default: opp at the setting's own --x statistic")
	cmd.Flags().StringVar(&o.x, "x", "max_pr", "promotion-rate `statistic` of the default reference: max_pr, p99_pr, p98_pr or mean_pr")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the comparison as JSON (every bucket)")
	cmd.Flags().IntVar(&o.top, "top", 10, "print the `N` address spaces and regions with the most headroom, the rest summed (0: all)")
	cmd.Flags().StringVar(&o.model, "model", "", "L-OPP model `FILE` (from mdk lopp train) for lopp settings")
	cmd.Flags().StringVar(&o.maps, "maps", "", "the trace's mappings sidecar `FILE` (default: TRACE.maps if it exists)")
	return cmd
}

// oneSetting parses spec, which must name exactly one setting.
func oneSetting(flag, spec string, h trace.Header, m policy.Scorer) (policy.Setting, error) {
	ss, err := policy.ParseSpecs([]string{spec}, h.Window, policy.SpecOptions{Model: m})
	if se := (*policy.SpecError)(nil); errors.As(err, &se) {
		return nil, usagef("%s %v", flag, err)
	} else if err != nil {
		return nil, usageError{err}
	}
	if len(ss) != 1 {
		return nil, usagef("%s %q: want one setting, got a grid of %d", flag, spec, len(ss))
	}
	return ss[0], nil
}

func runHeadroom(e *env, o headroomOptions, path string) error {
	if o.policy == "" {
		return usagef("headroom needs -p SETTING")
	}
	st, ok := result.ParseStat(o.x)
	if !ok {
		return usagef("--x %q: want max_pr, p99_pr, p98_pr or mean_pr", o.x)
	}
	if o.top < 0 {
		return usagef("--top %d: want 0 or more", o.top)
	}
	r, c, err := e.openTrace(path)
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := loadModel(o.model)
	if err != nil {
		return err
	}
	s, err := oneSetting("--policy", o.policy, r.Header(), m)
	if err != nil {
		return err
	}
	var ref policy.Setting
	if o.vs != "" {
		if ref, err = oneSetting("--vs", o.vs, r.Header(), m); err != nil {
			return err
		}
	}
	t, err := trace.ReadAll(r)
	if err != nil {
		return err
	}
	if sm := t.Header.Sample; !sm.All() {
		fmt.Fprintf(e.stderr, "mdk: the trace is a %s sample of the pages: counts are the sample's, not scaled\n", sm)
	}
	regions, from, err := loadRegions(path, o.maps, t)
	if err != nil {
		return err
	}
	ho := headroom.Options{Regions: regions, RegionsFrom: from}
	var cmp *headroom.Comparison
	if ref == nil {
		cmp, err = headroom.CompareOPP(e.ctx, t, s, st, ho)
	} else {
		cmp, err = headroom.Compare(e.ctx, t, s, ref, ho)
	}
	if err != nil {
		return err
	}
	if o.json {
		return headroom.WriteJSON(e.stdout, cmp)
	}
	return headroom.WriteText(e.stdout, cmp, o.top)
}

// loadRegions returns the regions of t: from the mappings sidecar maps (or,
// if maps is "", path's sidecar path+".maps" if it exists), else the
// address ranges; and where they came from, in words.
func loadRegions(path, maps string, t *trace.Trace) (*trace.Regions, string, error) {
	file := maps
	if file == "" && path != "-" {
		file = path + trace.MapsSuffix
	}
	var ms []trace.Mapping
	if file != "" {
		var err error
		if ms, err = trace.ReadMapsFile(file); err != nil {
			return nil, "", err
		}
		if ms == nil && maps != "" {
			return nil, "", fmt.Errorf("--maps %s: no such file", maps)
		}
	}
	if ms == nil {
		return trace.AddressRanges(t.Pages, t.Header.PageSize), "address ranges (no mappings)", nil
	}
	return trace.FromMappings(t.Pages, t.Header.PageSize, ms), fmt.Sprintf("%d mappings of %s", len(ms), file), nil
}
