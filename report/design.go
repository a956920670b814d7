package report

import (
	"cmp"
	"slices"

	"mdk/result"
)

// Design is the report's design section (mdk report --design,
// docs/headroom.md): for each policy's chosen setting, its headroom against
// OPP split by cause and by memory region, and what-if curves beside the
// original ones. The caller computes it (mdk headroom's comparison, mpc on
// transformed traces); the report only draws it.
type Design struct {
	// Stat is the statistic at which each setting's OPP reference was
	// taken (OPP at the setting's own value of it).
	Stat string
	// Causes names the stacks of the cause bars, in order; Regions those of
	// the region bars (the top regions by headroom, then "other").
	Causes, Regions []string
	// RegionsFrom says where the regions came from: the trace's mappings
	// sidecar, or address ranges.
	RegionsFrom string
	Rows        []DesignRow
	WhatIfs     []WhatIf
}

// DesignRow is one setting compared with its OPP reference. Every value is
// in points of alive page-windows: the reference's savings minus the
// setting's, so ByCause and ByRegion each add up to Headroom.
type DesignRow struct {
	Setting, Reference string
	Headroom           float64
	ByCause, ByRegion  []float64
}

// WhatIf is a transformed trace's curves (every setting, as Data.Results).
type WhatIf struct {
	Label   string // what changed: "pages of 2 MiB", "windows x4 (2m)"
	Results []*result.Result
}

// jsDesign is the design section's payload.
type jsDesign struct {
	Causes   []string      `json:"causes"`
	Regions  []string      `json:"regions"`
	Settings []string      `json:"settings"`
	ByCause  [][]float64   `json:"byCause"`  // [cause][row], points
	ByRegion [][]float64   `json:"byRegion"` // [region][row], points
	Headroom []float64     `json:"headroom"` // per row, points
	WhatIfs  []jsWhatIfSet `json:"whatIfs"`
}

type jsWhatIfSet struct {
	Label  string    `json:"label"`
	Curves []jsCurve `json:"curves"`
}

// frontierCurves returns each policy's points of rs on statistic x, sorted
// by x, their frontier marked (as the curves chart).
func frontierCurves(rs []*result.Result, x result.Stat) []jsCurve {
	names, groups := result.Group(rs)
	var out []jsCurve
	for _, name := range names {
		c := jsCurve{Policy: name}
		for _, r := range groups[name] {
			c.Points = append(c.Points, jsPoint{
				X: round(100 * r.Stat(x)), Y: round(100 * r.Savings()), Params: r.Params,
				MaxPR: r.MaxPR(), P99PR: r.Percentile(99), MeanPR: r.MeanPR(),
				Promotions: r.TotalPromotions(), Saved: r.Saved,
			})
		}
		slices.SortStableFunc(c.Points, func(a, b jsPoint) int { return cmp.Or(cmp.Compare(a.X, b.X), cmp.Compare(a.Y, b.Y)) })
		for _, i := range frontier(c.Points, func(p jsPoint) (float64, float64) { return p.X, p.Y }) {
			c.Points[i].Frontier = true
		}
		out = append(out, c)
	}
	return out
}

func designPayload(d *Design, x result.Stat) *jsDesign {
	if d == nil {
		return nil
	}
	p := &jsDesign{Causes: d.Causes, Regions: d.Regions}
	p.ByCause = make([][]float64, len(d.Causes))
	p.ByRegion = make([][]float64, len(d.Regions))
	for _, r := range d.Rows {
		p.Settings = append(p.Settings, r.Setting)
		p.Headroom = append(p.Headroom, round(r.Headroom))
		for i := range d.Causes {
			p.ByCause[i] = append(p.ByCause[i], round(r.ByCause[i]))
		}
		for i := range d.Regions {
			p.ByRegion[i] = append(p.ByRegion[i], round(r.ByRegion[i]))
		}
	}
	for _, w := range d.WhatIfs {
		p.WhatIfs = append(p.WhatIfs, jsWhatIfSet{Label: w.Label, Curves: frontierCurves(w.Results, x)})
	}
	return p
}
