package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/result"
	"mdk/tier"
	"mdk/trace"
)

// tierData is the test report on the zram built-in tier.
func tierData(t *testing.T) *Data {
	d := *testReport(t)
	d.Tier, _ = tier.Builtin("zram")
	d.Window = trace.DefaultWindow
	return &d
}

// TestTierTables checks that with a tier the every-setting table is
// tier.WriteCSV's (SPEC section 6's columns, then the tier's) and the
// best-setting table's net savings and slowdown are the tier's for its
// setting; without a tier the page has no tier section.
func TestTierTables(t *testing.T) {
	d := tierData(t)
	var page bytes.Buffer
	if err := Generate(&page, d, Options{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := d.Tier.WriteCSV(&buf, d.Results, d.Window); err != nil {
		t.Fatal(err)
	}
	recs, _ := csv.NewReader(&buf).ReadAll()
	var got [][]string
	for _, r := range readTable(t, page.String(), "all") {
		got = append(got, r.values)
	}
	if diff := cmp.Diff(recs[1:], got); diff != "" {
		t.Fatalf("every-setting table differs from tier.WriteCSV (-csv +table):\n%s", diff)
	}
	byName := map[string]*result.Result{}
	for _, r := range d.Results {
		byName[r.Policy+":"+r.Params] = r
	}
	rows := 0
	for _, row := range readTable(t, page.String(), "best") {
		if row.params == "" {
			continue
		}
		k := d.Tier.Cost(byName[row.policy+":"+row.params], d.Window)
		if row.cols["netsavings"] != result.FormatFloat(k.NetSavings) || row.cols["slowdown"] != result.FormatFloat(k.Slowdown) {
			t.Errorf("%s:%s: net savings %s, slowdown %s; want %v, %v", row.policy, row.params, row.cols["netsavings"], row.cols["slowdown"], k.NetSavings, k.Slowdown)
		}
		rows++
	}
	if rows == 0 {
		t.Error("no best-setting row")
	}
	if !strings.Contains(page.String(), `id="chart-tier"`) || !strings.Contains(page.String(), `"tierCurves":`) {
		t.Error("no tier chart or curves")
	}
	page.Reset()
	if err := Generate(&page, testReport(t), Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), `id="chart-tier"`) || strings.Contains(page.String(), "net_savings") {
		t.Error("tier section without a tier")
	}
}

// TestTierReportInBrowser opens a report with a tier in headless chromium:
// the net-savings vs slowdown chart is drawn, a line and a scatter per
// policy, with ink on its canvas, and nothing errs or loads.
func TestTierReportInBrowser(t *testing.T) {
	chromium := testutil.RequireTool(t, "chromium")
	d := tierData(t)
	c := generateInBrowser(t, chromium, d, Options{})
	names, _ := result.Group(d.Results)
	ch, ok := c.Charts["chart-tier"]
	switch {
	case !ok:
		t.Fatalf("tier chart not drawn: %+v", c.Charts)
	case !ch.Canvas || ch.Inked < 1000:
		t.Errorf("tier chart: canvas %v with %d inked pixels: looks empty", ch.Canvas, ch.Inked)
	case ch.Series != 2*len(names) || ch.Points < len(d.Results):
		t.Errorf("tier chart: %d series with %d points, want %d series and at least %d points", ch.Series, ch.Points, 2*len(names), len(d.Results))
	}
	if _, ok := c.Charts["chart-mpc"]; !ok {
		t.Error("the curves chart is gone")
	}
}
