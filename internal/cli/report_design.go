package cli

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"mdk/headroom"
	"mdk/mpc"
	"mdk/policy"
	"mdk/report"
	"mdk/result"
	"mdk/trace"
)

// defaultWhatIfs are the what-ifs of mdk report --design without --what-if.
var defaultWhatIfs = []string{"page-size=2M", "window-factor=4"}

// designRegions is how many regions the design section's region bars show
// before "other".
const designRegions = 5

// parseWhatIf parses one --what-if: comma-separated page-size=SIZE and
// window-factor=K, as mdk convert's flags.
func parseWhatIf(s string) (convertOptions, error) {
	o := convertOptions{windowFactor: 1}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		switch {
		case ok && k == "page-size":
			o.pageSize = v
		case ok && k == "window-factor":
			n, err := strconv.Atoi(v)
			if err != nil {
				return o, usagef("--what-if %q: window-factor %q is not a whole number", s, v)
			}
			o.windowFactor = n
		default:
			return o, usagef("--what-if %q: want page-size=SIZE and/or window-factor=K, comma-separated", s)
		}
	}
	return o, nil
}

// whatIfLabel says what a what-if changes for a trace of header h.
func whatIfLabel(o convertOptions, h trace.Header) string {
	var parts []string
	if o.pageSize != "" {
		parts = append(parts, "pages of "+o.pageSize)
	}
	if o.windowFactor > 1 {
		parts = append(parts, fmt.Sprintf("windows x%d (%s)", o.windowFactor, trace.FormatDuration(h.Window*time.Duration(o.windowFactor))))
	}
	if len(parts) == 0 {
		return "unchanged"
	}
	return strings.Join(parts, ", ")
}

// design computes the report's design section for the trace at path: each
// policy's best setting at the first target (but OPP's) against OPP at its
// own statistic st, by cause and by region, and the curves of the same
// specs on each what-if.
func (e *env) design(path string, o reportOptions, rs []*result.Result, st result.Stat, targets []float64) (*report.Design, error) {
	if st == "" {
		st = result.MaxPR
	}
	if len(targets) == 0 {
		targets = result.DefaultTargets
	}
	whatIfs := o.whatIfs
	if len(whatIfs) == 0 {
		whatIfs = defaultWhatIfs
	}
	var wopts []convertOptions
	for _, w := range whatIfs {
		wo, err := parseWhatIf(w)
		if err != nil {
			return nil, err
		}
		wopts = append(wopts, wo)
	}
	r, c, err := e.openTrace(path)
	if err != nil {
		return nil, err
	}
	t, err := trace.ReadAll(r)
	c.Close()
	if err != nil {
		return nil, err
	}
	m, err := loadModel(o.mpc.model)
	if err != nil {
		return nil, err
	}
	regions, from, err := loadRegions(path, "", t)
	if err != nil {
		return nil, err
	}
	d := &report.Design{RegionsFrom: from, Stat: string(st), Causes: []string{"waiting (later)", "missed", "spent"}}
	var cmps []*headroom.Comparison
	names, groups := result.Group(rs)
	for _, name := range names {
		if name == "opp" {
			continue
		}
		b := result.Best(groups[name], st, targets[0])
		if b == nil {
			continue
		}
		s, err := oneSetting("design", b.Policy+":"+b.Params, t.Header, m)
		if err != nil {
			return nil, err
		}
		cm, err := headroom.CompareOPP(e.ctx, t, s, st, headroom.Options{Regions: regions, RegionsFrom: from})
		if err != nil {
			return nil, err
		}
		cmps = append(cmps, cm)
		d.Rows = append(d.Rows, report.DesignRow{
			Setting: policy.String(s), Reference: cm.Ref.Policy + ":" + cm.Ref.Params,
			Headroom: cm.Points(cm.Headroom()),
			ByCause: []float64{cm.Points(cm.Classes[headroom.Later].Lost()), cm.Points(cm.Classes[headroom.Missed].Lost()),
				cm.Points(cm.Classes[headroom.Spent].Lost())},
		})
	}
	// The regions: the designRegions with the most headroom over every
	// row (ties by label), then the rest as "other".
	lost := func(b *headroom.Bucket) int64 {
		var n int64
		for _, x := range b.Classes {
			n += x.Lost()
		}
		return n
	}
	weight := map[string]int64{}
	for _, cm := range cmps {
		for _, b := range regionSplit(cm).Buckets {
			weight[b.Label] += max(lost(b), -lost(b))
		}
	}
	labels := make([]string, 0, len(weight))
	for l := range weight {
		labels = append(labels, l)
	}
	slices.SortFunc(labels, func(a, b string) int { return cmp.Or(cmp.Compare(weight[b], weight[a]), cmp.Compare(a, b)) })
	top := labels[:min(designRegions, len(labels))]
	d.Regions = append(slices.Clone(top), "other")
	for i, cm := range cmps {
		vals := make([]float64, len(d.Regions))
		var rest int64
		for _, b := range regionSplit(cm).Buckets {
			if k := slices.Index(top, b.Label); k >= 0 {
				vals[k] = cm.Points(lost(b))
			} else {
				rest += lost(b)
			}
		}
		vals[len(top)] = cm.Points(rest)
		d.Rows[i].ByRegion = vals
	}
	for i, wo := range wopts {
		rd, c, err := e.openTrace(path)
		if err != nil {
			return nil, err
		}
		cr, err := coarsen(rd, wo)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("--what-if %s: %w", whatIfs[i], err)
		}
		ss, err := parseSpecs(o.mpc.policies, cr.Header().Window, o.mpc.model)
		if err != nil {
			c.Close()
			return nil, err
		}
		wrs, err := mpc.Generate(e.ctx, cr, ss, mpc.Options{})
		c.Close()
		if err != nil {
			return nil, fmt.Errorf("--what-if %s: %w", whatIfs[i], err)
		}
		d.WhatIfs = append(d.WhatIfs, report.WhatIf{Label: whatIfLabel(wo, t.Header), Results: wrs})
	}
	return d, nil
}

// regionSplit returns the comparison's split by region.
func regionSplit(cm *headroom.Comparison) headroom.Split {
	for _, sp := range cm.Splits {
		if sp.Dim == "region" {
			return sp
		}
	}
	panic("cli: a comparison without a region split")
}
