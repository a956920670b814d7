package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var reportPayloadRe = regexp.MustCompile(`(?s)<script id="mdk-data" type="application/json">(.*?)</script>`)

// TestReportDesign: the design section's rows are mdk headroom's numbers
// for each policy's best setting at the first target, their stacks add up
// to the headroom, and there is one what-if per --what-if.
func TestReportDesign(t *testing.T) {
	dir := t.TempDir()
	tr, out := filepath.Join(dir, "t.mdkt"), filepath.Join(dir, "r.html")
	if code, _, errs := run(t, "", "gen", "--model", "mix", "--pages", "400", "--windows", "30", "--seed", "5", "-o", tr); code != 0 {
		t.Fatal(errs)
	}
	code, _, errs := run(t, "", "report", tr, "-o", out, "-p", "age", "-p", "pace", "-p", "opp", "--target", "2%",
		"--design", "--what-if", "window-factor=3", "--what-if", "page-size=16K,window-factor=2")
	if code != 0 {
		t.Fatal(errs)
	}
	page, _ := os.ReadFile(out)
	m := reportPayloadRe.FindSubmatch(page)
	if m == nil {
		t.Fatal("no payload")
	}
	var pl struct {
		Design struct {
			Settings []string    `json:"settings"`
			Headroom []float64   `json:"headroom"`
			ByCause  [][]float64 `json:"byCause"`
			ByRegion [][]float64 `json:"byRegion"`
			WhatIfs  []struct {
				Label  string            `json:"label"`
				Curves []json.RawMessage `json:"curves"`
			} `json:"whatIfs"`
		} `json:"design"`
	}
	if err := json.Unmarshal(m[1], &pl); err != nil {
		t.Fatal(err)
	}
	g := pl.Design
	if len(g.WhatIfs) == 2 {
		t.Logf("what-ifs %q, %q", g.WhatIfs[0].Label, g.WhatIfs[1].Label)
	}
	if len(g.Settings) != 2 || len(g.WhatIfs) != 2 || g.WhatIfs[0].Label != "windows x3 (90s)" ||
		g.WhatIfs[1].Label != "pages of 16K, windows x2 (1m)" || len(g.WhatIfs[1].Curves) != 3 {
		t.Fatalf("design: settings %q, %d what-ifs", g.Settings, len(g.WhatIfs))
	}
	for r, s := range g.Settings {
		code, out, errs := run(t, "", "headroom", tr, "-p", s, "--json")
		if code != 0 {
			t.Fatal(errs)
		}
		var h struct {
			Points float64 `json:"headroom_pts"`
		}
		if err := json.Unmarshal([]byte(out), &h); err != nil {
			t.Fatal(err)
		}
		var causes, regions float64
		for i := range g.ByCause {
			causes += g.ByCause[i][r]
		}
		for i := range g.ByRegion {
			regions += g.ByRegion[i][r]
		}
		// The payload keeps 4 significant digits.
		if tol := 1e-3 * math.Max(1, math.Abs(h.Points)); math.Abs(g.Headroom[r]-h.Points) > tol ||
			math.Abs(causes-h.Points) > 5*tol || math.Abs(regions-h.Points) > 5*tol {
			t.Errorf("%s: report's headroom %v (causes %v, regions %v), mdk headroom's %v", s, g.Headroom[r], causes, regions, h.Points)
		}
	}
	for _, tc := range []struct{ args, want string }{
		{"--what-if window-factor=2", "--what-if needs --design"},
		{"--design --what-if page=2M", "want page-size=SIZE"},
		{"--design --what-if window-factor=x", "not a whole number"},
	} {
		code, _, errs := run(t, "", append([]string{"report", tr, "-o", out}, strings.Fields(tc.args)...)...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q", tc.args, code, errs)
		}
	}
}
