package cli

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
		{"tune-tier-slo", []string{"tune", example, "--slo", "slowdown<=0.0001%", "-p", "age:A=1..3", "-p", "paw:P=2,wait=1", "-p", "paw:P=4,wait=0",
			"-p", "pace:P=3,A=2", "-p", "pace:P=inf,A=2", "--tier", "ssd"}},
		{"tune-tier-slo-max", []string{"tune", example, "--slo", "max_slowdown<=0.0003%", "-p", "age:A=1..3", "-p", "opp:r=0|25%", "--tier", "ssd", "--json"}},
		{"err-tune-slowdown-no-tier", []string{"tune", example, "--slo", "slowdown<=1%"}},
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
// columns; --x slowdown without --tier is refused.
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
	if strings.Contains(string(page), "slowdown ≤") {
		t.Errorf("report without --x slowdown has rows at slowdown targets")
	}
	code, _, errs = run(t, "", "report", example, "--x", "slowdown", "-o", out)
	if code != ExitUsage || !strings.Contains(errs, "--x slowdown needs --tier") {
		t.Errorf("--x slowdown without --tier: exit %d, %s", code, errs)
	}
}

// TestReportTierTargets checks the best-setting table's rows at slowdown
// targets (--tier ssd --x slowdown): on the worked example (10 windows of
// 30 s, 100 us a promotion) a setting is at most 0.0001% slowdown exactly
// when it has at most 3 promotions (3 x 1e5 / 3e11 = 1e-6), so age's best
// there is A=2 (3 promotions; A=1 has 4) and OPP's r=0% (0 promotions, the
// savings of r=25%, earlier); at 1% every setting qualifies. The rows at
// the default max_pr targets stay.
func TestReportTierTargets(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, _, errs := run(t, "", "report", example, "-p", "age:A=0..3", "-p", "opp:r=0|25%|50%", "--tier", "ssd", "--x", "slowdown", "--target", "0.0001%,1%", "-o", out)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	page, _ := os.ReadFile(out)
	var got []string
	for _, m := range regexp.MustCompile(`<tr data-policy="(\w+)" data-params="([^"]*)">\n<td>\w+</td><td data-v="[^"]*">([^<]*)</td>`).FindAllStringSubmatch(string(page), -1) {
		got = append(got, m[1]+" "+m[3]+" "+m[2])
	}
	want := []string{
		"age 0.5% ", "age 1% ", "age 2% ", "age 5% ",
		"opp 0.5% r=0%", "opp 1% r=0%", "opp 2% r=0%", "opp 5% r=0%",
		"age slowdown ≤ 0.0001% A=2", "age slowdown ≤ 1% A=0",
		"opp slowdown ≤ 0.0001% r=0%", "opp slowdown ≤ 1% r=50%",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("best-setting rows:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTierOPPReachesSlowdownTargets: with --x slowdown, opp's grid (its wide
// grid, up to r = 100%) reaches as far as the other policies': at a target
// every setting meets, OPP's best is its most savings, which no policy beats,
// so no headroom is negative; mdk tune's OPP yardstick on a slowdown SLO
// says it is a reference, not a bound. With opp's grid stopping at r = 20%,
// age:A=0 beat "the optimum" by about 20 points on a gen mix trace.
func TestTierOPPReachesSlowdownTargets(t *testing.T) {
	p := genTrace(t, "--model", "mix", "--seed", "7")
	code, out, errs := run(t, "", "mpc", p, "--tier", "zram", "--x", "slowdown", "--target", "100%")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if strings.HasPrefix(line, "tier ") {
			continue
		}
		rows++
		if strings.Contains(line, " -") && regexp.MustCompile(`-[0-9.]+ pts`).MatchString(line) {
			t.Errorf("negative headroom against opp: %s", line)
		}
		if strings.HasPrefix(line, "opp ") && !strings.Contains(line, "+0.00 pts") {
			t.Errorf("opp's own row: %s", line)
		}
	}
	if rows != 5 {
		t.Errorf("%d rows, want one per default policy:\n%s", rows, out)
	}
	code, out, errs = run(t, "", "tune", p, "--tier", "zram", "--slo", "slowdown<=100%")
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errs)
	}
	if regexp.MustCompile(`-[0-9.]+ pts`).MatchString(out) {
		t.Errorf("tune: a policy beats the OPP yardstick at a bound every setting meets:\n%s", out)
	}
	if !strings.Contains(out, "a reference but not a bound on the slowdown") || strings.Contains(out, "an oracle's optimum there") {
		t.Errorf("tune: the yardstick on a slowdown SLO claims optimality:\n%s", out)
	}
}
