package cli

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// genTrace writes a small gen trace and returns its path.
func genTrace(t *testing.T, args ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "g.mdkt")
	if code, _, errs := run(t, "", append([]string{"gen", "--pages", "3000", "--windows", "40", "-o", p}, args...)...); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	return p
}

// TestSampleAllEqualsExact: --sample 100% prints exactly what the exact
// run prints, in every output format of mdk mpc and tune.
func TestSampleAllEqualsExact(t *testing.T) {
	p := genTrace(t)
	for _, args := range [][]string{
		{"mpc", p, "--csv"},
		{"mpc", p, "--json", "-p", "age", "-p", "opp"},
		{"mpc", p},
		{"tune", p, "--slo", "max_pr<=2%", "-p", "age", "-p", "pace"},
		{"tune", p, "--slo", "max_pr<=2%", "--json", "-p", "vmin"},
	} {
		c1, exact, e1 := run(t, "", args...)
		c2, all, e2 := run(t, "", append(args, "--sample", "100%", "--sample-seed", "99")...)
		if c1 != 0 || c2 != 0 {
			t.Fatalf("%v: exit %d, %d: %s %s", args, c1, c2, e1, e2)
		}
		if exact != all {
			t.Errorf("%v: --sample 100%% differs from the exact run:\n%s\n---\n%s", args, exact, all)
		}
	}
}

// TestSampleCLI: a sampled run prints its rate and bounds in CSV, JSON and
// text, is the same twice for a seed, and a trace recorded sampled is
// honoured without the flag.
func TestSampleCLI(t *testing.T) {
	p := genTrace(t, "--pages", "20000") // 10%: 2,000 pages, enough for bounds (result.MinBoundPages)
	code, out, errs := run(t, "", "mpc", p, "--csv", "--sample", "10%", "--sample-seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(rows[0], ","); !strings.HasSuffix(h, ",sample_rate,max_pr_err,p99_pr_err,p98_pr_err,mean_pr_err,promotions_err,saved_page_windows_err,alive_page_windows_err,savings_err,avg_saved_bytes_err") {
		t.Fatalf("header %s", h)
	}
	if rows[1][11] != "0.1" || rows[1][20] == "" || rows[1][20] == "0" || rows[1][19] != "" || rows[1][12] != "" {
		t.Fatalf("row %v: want rate 0.1, a bound of avg_saved_bytes and none of savings and max_pr (result.PrintedBound)", rows[1])
	}
	_, again, _ := run(t, "", "mpc", p, "--csv", "--sample", "10%", "--sample-seed", "3")
	if again != out {
		t.Fatal("two runs with one seed differ")
	}
	_, other, _ := run(t, "", "mpc", p, "--csv", "--sample", "10%", "--sample-seed", "4")
	if other == out {
		t.Fatal("seeds 3 and 4 print the same")
	}
	_, text, _ := run(t, "", "mpc", p, "--sample", "10%")
	if !strings.Contains(text, "sampled: 10% of the pages; counts are the sample's x 10") || !strings.Contains(text, "% (no bound)") || !regexp.MustCompile(`\d ±\d`).MatchString(text) {
		t.Fatalf("text:\n%s", text)
	}
	// The headroom's bound covered the exact headroom for 25-64% of the
	// best settings on the coverage table: none is printed
	// (result.Choice.PrintedHeadroomBound).
	if !regexp.MustCompile(`[+-]\d+\.\d\d pts \(no bound\)`).MatchString(text) || strings.Contains(text, "pts ±") {
		t.Fatalf("a bound beside OPP's headroom:\n%s", text)
	}
	_, js, _ := run(t, "", "mpc", p, "--json", "--sample", "10%", "-p", "age")
	if !strings.Contains(js, `"sample_rate": 0.1`) || !strings.Contains(js, `"savings_err"`) && !strings.Contains(js, `"err": {`) {
		t.Fatalf("json:\n%s", js)
	}
	_, tt, _ := run(t, "", "tune", p, "--slo", "max_pr<=5%", "-p", "age", "--sample", "10%")
	// tune prints the statistic and savings, whose bounds the rule of
	// docs/bench.md does not print (result.PrintedBound), and says so.
	if !strings.Contains(tt, "Sampled: 10% of the pages") || strings.Contains(tt, "±") || !strings.Contains(tt, "printed without error bounds") {
		t.Fatalf("tune:\n%s", tt)
	}

	// A sampled trace, written by convert, is honoured by mpc as is.
	sp := filepath.Join(t.TempDir(), "s.mdkt")
	if code, _, errs := run(t, "", "convert", p, sp, "--sample", "10%", "--sample-seed", "3"); code != 0 {
		t.Fatalf("convert: %s", errs)
	}
	_, fromTrace, errs := run(t, "", "mpc", sp, "--csv")
	if fromTrace != out {
		t.Fatalf("the sampled trace's curves differ from --sample on the whole trace: %s", errs)
	}
	code, _, errs = run(t, "", "mpc", sp, "--csv", "--sample", "1%", "--sample-seed", "5")
	if code == 0 || !strings.Contains(errs, "already sampled at 10% seed 3") {
		t.Fatalf("another seed on a sampled trace: exit %d, %s", code, errs)
	}
}

func TestSampleFlagErrors(t *testing.T) {
	p := genTrace(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "3%"}, "divides 1000000"},
		{[]string{"--sample", "0%"}, "above 0"},
		{[]string{"--sample", "lots"}, `sampling rate "lots"`},
		{[]string{"--sample", "1%", "--sample-groups", "1"}, "--sample-groups 1: want 2 .. 64"},
	} {
		code, _, errs := run(t, "", append([]string{"mpc", p}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestSampledTraceSimStats: mdk sim scales a sampled trace's counts as mpc
// does, and mdk stats says the trace is sampled.
func TestSampledTraceSimStats(t *testing.T) {
	p := genTrace(t)
	sp := filepath.Join(t.TempDir(), "s.txt")
	if code, _, errs := run(t, "", "convert", p, sp, "--sample", "20%"); code != 0 {
		t.Fatalf("convert: %s", errs)
	}
	_, m, _ := run(t, "", "mpc", sp, "--csv", "-p", "age:A=2|5")
	code, s, errs := run(t, "", "sim", sp, "age:A=2|5")
	if code != 0 || !strings.Contains(errs, "20% seed 1 sample of the pages: counts are the sample's x 5") {
		t.Fatalf("sim: exit %d, %s", code, errs)
	}
	mr, _ := csv.NewReader(strings.NewReader(m)).ReadAll()
	sr, _ := csv.NewReader(strings.NewReader(s)).ReadAll()
	for i := range mr {
		if strings.Join(mr[i][:12], ",") != strings.Join(sr[i][:12], ",") {
			t.Errorf("row %d: mpc %v, sim %v", i, mr[i][:12], sr[i][:12])
		}
	}
	_, st, _ := run(t, "", "stats", sp)
	if !strings.Contains(st, "20% seed 1: every count below is of the sampled pages only") {
		t.Fatalf("stats:\n%s", st)
	}
}

// TestSampleReportHeadroomBound: the sampled report's best-per-target
// table prints the bounds that the rule of docs/bench.md prints (beside
// promotions, not OPP's, and saved bytes) and none beside savings, the
// statistic and OPP's headroom.
func TestSampleReportHeadroomBound(t *testing.T) {
	p := genTrace(t, "--pages", "20000") // 10%: 2,000 pages, enough for bounds (result.MinBoundPages)
	out := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := run(t, "", "report", p, "-p", "age", "-p", "opp", "--sample", "10%", "-o", out); code != 0 {
		t.Fatalf("report: %s", errs)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		re   string
		want bool
	}{
		{`data-col="savings">[^<]*<span class="err">±`, false},
		{`data-col="stat">[^<]*<span class="err">±`, false},
		{`data-col="stat">[^\n]*</td>\n<td data-v="[^"]+">[^<]*<span class="err">±`, false}, // the headroom
		{`<td data-v="\d+">[\d,]+ <span class="err">±`, true},                               // promotions
	} {
		if regexp.MustCompile(c.re).Match(b) != c.want {
			t.Errorf("%s: found %v, want %v", c.re, !c.want, c.want)
		}
	}
}

// TestSmallSampleWarning: mdk mpc, tune and report each say loudly, on
// standard error, that a sample holds fewer than result.MinBoundPages pages
// or none, and say nothing of the kind for a sample large enough.
func TestSmallSampleWarning(t *testing.T) {
	p := genTrace(t, "--pages", "20000")
	html := filepath.Join(t.TempDir(), "r.html")
	cmds := [][]string{
		{"mpc", p, "-p", "age"},
		{"tune", p, "--slo", "max_pr<=5%", "-p", "age"},
		{"tune", p, "--slo", "max_pr<=5%", "-p", "age", "--json"},
		{"report", p, "-p", "age", "-o", html},
	}
	for _, c := range []struct {
		rate, seed, want string // want "": no warning
	}{
		{"10%", "1", ""},
		{"1%", "1", "pages (fewer than 1000): its estimates are printed without error bounds"},
		{"0.0001%", "2", "sample keeps none of the trace's pages"}, // seed 2 keeps no page of this trace
	} {
		for _, args := range cmds {
			args := append(slices.Clone(args), "--sample", c.rate, "--sample-seed", c.seed)
			code, out, errs := run(t, "", args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			got := strings.Contains(errs, "mdk: WARNING: ")
			if c.want == "" {
				if got {
					t.Errorf("%v: a warning for a sample large enough:\n%s", args, errs)
				}
				continue
			}
			if !got || !strings.Contains(errs, c.want) {
				t.Errorf("%v: standard error lacks the WARNING %q:\n%s", args, c.want, errs)
			}
			if args[0] == "tune" && !strings.Contains(out, c.want) {
				t.Errorf("%v: the report lacks %q:\n%s", args, c.want, out)
			}
		}
	}
}
