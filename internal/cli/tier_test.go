package cli

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/result"
	"mdk/tier"
)

// quarterTier writes a tier file whose stored pages cost a quarter page and
// whose promotions cost 5 us (as tier's tests), and returns its path.
func quarterTier(t *testing.T) string {
	t.Helper()
	q := tier.Tier{Name: "quarter", Source: "test figures", PageSizeBytes: 4096, StoredBytesPerPage: 1024, PromotionNs: tier.Latency{Mean: 5000}}
	path := filepath.Join(t.TempDir(), "quarter.json")
	if err := q.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTierGolden runs mdk mpc with --tier (a file and a built-in) and its
// errors against golden files.
func TestTierGolden(t *testing.T) {
	q := quarterTier(t)
	cases := []struct {
		name string
		args []string
	}{
		{"mpc-tier-csv", []string{"mpc", example, "-p", "age:A=1..3", "-p", "opp:r=25%|50%", "--tier", q, "--csv"}},
		{"mpc-tier-json", []string{"mpc", example, "-p", "vmin:T=0", "--tier", q, "--json"}},
		{"mpc-tier-table", []string{"mpc", example, "-p", "age:A=0..3", "-p", "opp:r=0|25%|50%", "--tier", "ssd", "--x", "slowdown", "--target", "0.0001%,1%"}},
		{"mpc-tier-builtin", []string{"mpc", example, "-p", "age:A=1", "--tier", "ssd", "--target", "50%"}},
		{"tune-tier", []string{"tune", example, "--slo", "max_pr<=40%", "-p", "age:A=1|2|3", "-p", "opp:r=0|25%", "--tier", q}},
		{"err-mpc-tier-x", []string{"mpc", example, "--x", "slowdown"}},
		{"err-mpc-tier-unknown", []string{"mpc", example, "--tier", "nvme"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, "", tc.args...)
			args := strings.ReplaceAll(strings.Join(tc.args, " "), q, "quarter.json")
			got := fmt.Sprintf("$ mdk %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", args, code, out, strings.ReplaceAll(errs, q, "quarter.json"))
			testutil.Golden(t, tc.name+".golden", []byte(got))
		})
	}
}

// TestTierCSVKeepsSPECColumns checks that --tier only appends columns: the
// first eleven of every row are mdk mpc --csv's without it.
func TestTierCSVKeepsSPECColumns(t *testing.T) {
	q := quarterTier(t)
	var specs []string
	for _, r := range testutil.SpecTable {
		specs = append(specs, "-p", r.Spec)
	}
	_, plain, _ := run(t, "", append([]string{"mpc", example, "--csv"}, specs...)...)
	code, with, errs := run(t, "", append([]string{"mpc", example, "--csv", "--tier", q}, specs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	pr, _ := csv.NewReader(strings.NewReader(plain)).ReadAll()
	wr, err := csv.NewReader(strings.NewReader(with)).ReadAll()
	if err != nil || len(wr) != len(pr) || len(pr) != len(testutil.SpecTable)+1 {
		t.Fatalf("%d rows with --tier, %d without: %v", len(wr), len(pr), err)
	}
	for i := range pr {
		if got, want := strings.Join(wr[i][:len(result.CSVHeader)], ","), strings.Join(pr[i], ","); got != want {
			t.Errorf("row %d: %s, want %s", i, got, want)
		}
	}
}

// TestTierPlot draws net savings against slowdown.
func TestTierPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "net.svg")
	code, _, errs := run(t, "", "mpc", example, "-p", "age:A=0..3", "--tier", "zram", "--x", "slowdown", "--plot", path, "--csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"slowdown", "net savings", "zram"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("plot has no %q", want)
		}
	}
}

// TestFleetTier runs mdk fleet --tier on two copies of SPEC section 4's
// trace. vmin:T=0 saves S = 32 page-windows per copy over W = 10 windows of
// 4 KiB pages (13107.2 bytes on average) with 4 promotions; on the quarter
// tier each copy frees 3/4 of that net (9830.4) and stalls 4 x 5 us per
// 10 x 30 s, a slowdown of 1/15000000.
func TestFleetTier(t *testing.T) {
	dir := t.TempDir()
	ex, _ := os.ReadFile(example)
	var paths []string
	for _, n := range []string{"a.txt", "b.txt"} {
		paths = append(paths, filepath.Join(dir, n))
		os.WriteFile(paths[len(paths)-1], ex, 0o666)
	}
	out := filepath.Join(dir, "out")
	code, stdout, errs := run(t, "", append([]string{"fleet"}, append(paths, "-p", "vmin:T=0", "--slo", "max_pr<=50%", "--tier", quarterTier(t), "-o", out)...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	settings, _ := os.ReadFile(filepath.Join(out, "settings.csv"))
	rows, err := csv.NewReader(strings.NewReader(string(settings))).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("settings.csv: %v\n%s", err, settings)
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	want := map[string]string{
		"avg_saved_bytes": "26214.4", "net_avg_saved_bytes": "19660.8", "tier_bytes": "6553.6",
		"stall_seconds_per_second": fmt.Sprint(2.0 / 15e6), "mean_slowdown": fmt.Sprint(1 / 15e6), "max_job_slowdown": fmt.Sprint(1 / 15e6),
	}
	for k, v := range want {
		if col[k] != v {
			t.Errorf("settings.csv %s = %q, want %q", k, col[k], v)
		}
	}
	policies, _ := os.ReadFile(filepath.Join(out, "policies.csv"))
	if !strings.Contains(string(policies), "opp_net_avg_saved_bytes") {
		t.Errorf("policies.csv lacks the tier's columns:\n%s", policies)
	}
	if !strings.Contains(stdout, "net of the quarter tier's own memory") {
		t.Errorf("summary:\n%s", stdout)
	}
	// Without --tier the files have no tier column.
	code, _, errs = run(t, "", append([]string{"fleet"}, append(paths, "-p", "vmin:T=0", "-o", out)...)...)
	settings, _ = os.ReadFile(filepath.Join(out, "settings.csv"))
	if code != ExitOK || strings.Contains(string(settings), "net_") {
		t.Errorf("without --tier: exit %d %s\n%s", code, errs, settings)
	}
}

// TestReportTier writes a report with --tier: it has the tier's section and
// columns; --x slowdown is refused (the report's x is a statistic).
func TestReportTier(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errs := run(t, "", "report", example, "-p", "age:A=0..3", "-p", "opp", "--tier", quarterTier(t), "-o", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	page, _ := os.ReadFile(out)
	for _, want := range []string{`id="chart-tier"`, "Net savings and slowdown on the quarter tier", "<th>net_savings</th>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	code, _, errs = run(t, "", "report", example, "--tier", "zram", "--x", "slowdown", "-o", out)
	if code != ExitUsage || !strings.Contains(errs, "--x slowdown") {
		t.Errorf("--x slowdown: exit %d, %s", code, errs)
	}
}
