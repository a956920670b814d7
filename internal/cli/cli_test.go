package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

// run runs mdk in-process.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const example = "../../testdata/example.txt"

// TestGolden runs commands and compares exit code, stdout and stderr with
// testdata/NAME.golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	specs := []string{}
	for _, r := range testutil.SpecTable {
		specs = append(specs, "-p", r.Spec)
	}
	cases := []struct {
		name  string
		stdin string
		args  []string
	}{
		{"version", "", []string{"version"}},
		{"sim-text", "", []string{"sim", example, "age:A=1"}},
		{"sim-json", "", []string{"sim", example, "paw:P=2,wait=1", "--json"}},
		{"sim-grid-csv", "", []string{"sim", example, "pace:P=3|inf,A=1..2"}},
		{"sim-stdin", "mdk-trace 1\n0 a 1 2\n3 a 1\n", []string{"sim", "-", "vmin:T=0"}},
		{"mpc-spec-table-csv", "", append([]string{"mpc", example, "--csv"}, specs...)},
		{"mpc-json", "", []string{"mpc", example, "-p", "vmin:T=0|2", "-p", "opp:r=25%", "--json"}},
		{"mpc-table", "", []string{"mpc", example, "-p", "age:A=0..3", "-p", "opp:r=0|25%|50%", "--target", "0%,50%"}},
		{"verify-example", "", []string{"verify", example, "-p", "age:A=0..4", "-p", "vmin:T=0..4", "-p", "opp:r=0|25%|50%|100%"}},
		// Errors: every one names what is wrong.
		{"err-unknown-command", "", []string{"frobnicate"}},
		{"err-sim-args", "", []string{"sim", example}},
		{"err-sim-duration", "", []string{"sim", example, "age:A=45s"}},
		{"err-sim-unknown-policy", "", []string{"sim", example, "lfu:A=1"}},
		{"err-sim-missing-file", "", []string{"sim", "testdata/no-such-trace.txt", "age:A=1"}},
		{"err-sim-bad-trace", "mdk-trace 1\n0 a 1\n1 x 2\n", []string{"sim", "-", "age:A=1"}},
		{"err-mpc-bad-stat", "", []string{"mpc", example, "--x", "p50_pr"}},
		{"err-mpc-bad-target", "", []string{"mpc", example, "--target", "2 percent"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, tc.stdin, tc.args...)
			got := fmt.Sprintf("$ mdk %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", strings.Join(tc.args, " "), code, out, errs)
			testutil.Golden(t, tc.name+".golden", []byte(got))
		})
	}
}

// TestMPCSpecTable checks SPEC section 4's table through `mdk mpc --csv`.
func TestMPCSpecTable(t *testing.T) {
	args := []string{"mpc", example, "--csv"}
	for _, r := range testutil.SpecTable {
		args = append(args, "-p", r.Spec)
	}
	code, out, errs := run(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(testutil.SpecTable)+1 {
		t.Fatalf("got %d rows", len(rows))
	}
	for i, want := range testutil.SpecTable {
		row := rows[i+1]
		if got := row[0] + ":" + row[1]; got != want.Spec {
			t.Errorf("row %d is %s, want %s", i, got, want.Spec)
		}
		var total int64
		for _, p := range want.Promotions {
			total += p
		}
		maxPR, _ := strconv.ParseFloat(row[2], 64)
		if row[6] != fmt.Sprint(total) || row[7] != fmt.Sprint(want.Saved) || row[8] != "51" || maxPR != want.MaxPR {
			t.Errorf("%s: promotions %s, S %s, L %s, max_pr %s; SPEC says %d, %d, 51, %v", want.Spec, row[6], row[7], row[8], row[2], total, want.Saved, want.MaxPR)
		}
	}
}

// TestMPCPlot checks that --plot writes an SVG with one series per policy
// and labelled axes.
func TestMPCPlot(t *testing.T) {
	path := t.TempDir() + "/curves.svg"
	code, _, errs := run(t, "", "mpc", example, "-p", "age:A=0..3", "-p", "vmin:T=0..3", "-p", "opp", "--plot", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	for _, want := range []string{"<svg", ">age<", ">vmin<", ">opp<", "savings (%", "max promotion rate (%)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot has no %q", want)
		}
	}
	code, _, errs = run(t, "", "mpc", example, "--plot", t.TempDir()+"/curves.gif")
	if code != ExitUsage || !strings.Contains(errs, ".svg or .png") {
		t.Errorf("--plot curves.gif: exit %d, %q", code, errs)
	}
}

// TestDemo runs mdk demo end to end and checks its three files and table.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo generates a 4.5M-record trace")
	}
	dir := t.TempDir()
	code, out, errs := run(t, "", "demo", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"curves.csv", "curves.svg", "report.html"} {
		st, err := os.Stat(dir + "/" + f)
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
		if !strings.Contains(out, dir+"/"+f) {
			t.Errorf("stdout does not say where %s is:\n%s", f, out)
		}
	}
	for _, p := range []string{"age", "vmin", "opp", "paw", "pace"} {
		if !strings.Contains(out, "\n"+p+" ") {
			t.Errorf("table has no row for %s:\n%s", p, out)
		}
	}
	b, err := os.ReadFile(dir + "/curves.csv")
	if err != nil {
		t.Fatal(err)
	}
	// Every default grid: 1061 settings (49 each for age, vmin and opp,
	// 433 for paw, 481 for pace).
	n := 0
	for _, p := range policy.DefaultPolicies {
		n += len(policy.DefaultGrid(p, trace.DefaultWindow))
	}
	if n != 1061 {
		t.Errorf("the default grids have %d settings, want 1061", n)
	}
	if rows := strings.Count(string(b), "\n"); rows != n+1 {
		t.Errorf("curves.csv has %d lines, want %d settings + header", rows, n)
	}
}

// TestUsageErrorsByType: the exit code of an error depends on where it
// arose, not on its words. Cobra's own command-line mistakes exit 2; a
// failing command exits 1 even when its message quotes words cobra uses
// (here a missing file named like a cobra error).
func TestUsageErrorsByType(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "unknown flag: --x invalid argument")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bogus"}, ExitUsage, `unknown command "bogus" for "mdk"`},
		{[]string{"lopp", "bogus"}, ExitUsage, `unknown command "bogus" for "mdk lopp"`},
		{[]string{"lopp"}, ExitOK, ""},
		{[]string{"sim", "--bogus"}, ExitUsage, "unknown flag: --bogus"},
		{[]string{"sim", "-Z"}, ExitUsage, "unknown shorthand flag: 'Z'"},
		{[]string{"mpc", "--x"}, ExitUsage, "flag needs an argument: --x"},
		{[]string{"gen", "--pages", "many"}, ExitUsage, "invalid argument"},
		{[]string{"stats"}, ExitUsage, "stats takes 1 argument(s), got 0"},
		{[]string{"stats", missing}, ExitError, "no such file"},
		{[]string{"help", "sim"}, ExitOK, ""},
	} {
		code, _, stderr := run(t, "", tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("mdk %v: exit %d (%q), want %d with %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}
