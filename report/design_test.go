package report

import (
	"math"
	"testing"

	"mdk/internal/testutil"
)

// testDesign is a design section on testReport's results: two rows whose
// stacks add up to their headroom, two what-ifs (the same curves, for the
// drawing).
func testDesign(t *testing.T) *Data {
	d := *testReport(t)
	d.Design = &Design{
		Stat: "max_pr", Causes: []string{"waiting (later)", "missed", "spent"}, Regions: []string{"0x0-0x1000", "0x2000-0x9000", "other"},
		Rows: []DesignRow{
			{Setting: "age:A=4", Reference: "opp:r=1.5%", Headroom: 20.5, ByCause: []float64{15, 6.5, -1}, ByRegion: []float64{10, 8, 2.5}},
			{Setting: "pace:P=8,A=16", Reference: "opp:r=0.9%", Headroom: 12.25, ByCause: []float64{2, 10.25, 0}, ByRegion: []float64{0, 12.25, 0}},
		},
		WhatIfs: []WhatIf{{Label: "pages of 2M", Results: d.Results}, {Label: "windows x4 (2m)", Results: d.Results}},
	}
	return &d
}

// TestDesignInBrowser draws the design section in chromium: the cause and
// region bars (a series per cause and per region, with ink), each what-if
// chart (the original frontiers and the what-if's, a line each per
// policy), a table row per setting, stacks adding up to the headroom, and
// no script error or network request.
func TestDesignInBrowser(t *testing.T) {
	chromium := testutil.RequireTool(t, "chromium")
	d := testDesign(t)
	c := generateInBrowser(t, chromium, d, Options{MaxPoints: 100})
	want := map[string]int{"chart-design-cause": 3, "chart-design-region": 3, "chart-whatif-0": 2 * 5, "chart-whatif-1": 2 * 5}
	for id, n := range want {
		ch, ok := c.Charts[id]
		if !ok || ch.Series != n || ch.Points == 0 || !ch.Canvas || ch.Inked < 1000 {
			t.Errorf("chart %s: %+v (drawn %v), want %d series with ink", id, ch, ok, n)
		}
	}
	if c.Design == nil || c.Design.Rows != 2 || len(c.Design.CauseSums) != 2 {
		t.Fatalf("design self-check: %+v", c.Design)
	}
	for r, row := range d.Design.Rows {
		if math.Abs(c.Design.CauseSums[r]-row.Headroom) > 1e-9 || math.Abs(c.Design.RegionSums[r]-row.Headroom) > 1e-9 || c.Design.Headroom[r] != row.Headroom {
			t.Errorf("row %d: stacks add up to %v (cause) and %v (region), headroom %v; want %v", r, c.Design.CauseSums[r], c.Design.RegionSums[r], c.Design.Headroom[r], row.Headroom)
		}
	}
}
