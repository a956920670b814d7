package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewUserFlags checks the command-line mistakes of issue 21: each is
// refused with exit 2 and one line saying what is wrong, before any work.
func TestNewUserFlags(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.mdkt")
	if code, _, errs := run(t, "", "convert", example, tr); code != 0 {
		t.Fatal(errs)
	}
	agent := func(args ...string) []string {
		return append([]string{"agent", "--replay", tr, "--policy", "age:A=1", "--window", "1s", "-o", filepath.Join(dir, "run")}, args...)
	}
	csv := filepath.Join(dir, "in.csv")
	os.WriteFile(csv, []byte("1,5\n2,6\n"), 0o644)
	imp := func(flag, v string) []string {
		return []string{"import", "csv", csv, "-o", filepath.Join(dir, "i.mdkt"), "-t", "time-col=1,obj-id-col=2", flag, v}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{agent("--slo", "2"), "--slo 2: want a fraction of the accessed pages from 0 to 1"},
		{agent("--psi", "150"), "--psi 150: want a percentage from 0 to 100"},
		{agent("--window", "1ns"), "--window 1ns: shorter than 10ms"},
		{[]string{"record", "--pid", "1", "--window", "1ns", "-o", filepath.Join(dir, "r.mdkt")}, "--window 1ns: shorter than 10ms"},
		{agent("--swap-floor", "lots"), `--swap-floor "lots": want a size in bytes, or with a unit`},
		{agent("--swap-floor", "1.5.1G"), `--swap-floor "1.5.1G": want a size`},
		{agent("--duration", "0"), "--duration 0: not a value here"},
		{[]string{"record", "--pid", "1", "--duration", "0s", "-o", filepath.Join(dir, "r.mdkt")}, "--duration 0: not a value here"},
		{imp("--window", "0"), "--window 0: not a value here"},
		{imp("--page-size", "0"), "--page-size 0: not a value here"},
		{imp("--max-windows", "0"), "--max-windows 0: not a value here"},
		{imp("--time-unit", "0s"), "--time-unit 0: not a value here"},
		{imp("--sector-size", "0"), "--sector-size 0: not a value here"},
		{imp("--window-requests", "0"), "--window-requests 0: not a value here"},
		{[]string{"workload", "replay", tr, "--window", "0"}, "--window 0: not a value here"},
		{[]string{"calibrate", "--pages", "0", "--dry-run"}, "--pages 0: want 64 to"},
		{[]string{"calibrate", "--pid", "1", "--pid-pages", "0", "--dry-run"}, "--pid-pages 0: want 64 to"},
		// Nested commands' hints name the command as it is typed.
		{[]string{"agent", "compare"}, "(see mdk agent compare --help)"},
		{[]string{"lopp", "train"}, "(see mdk lopp train --help)"},
	} {
		code, out, errs := run(t, "", tc.args...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("mdk %s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", strings.Join(tc.args, " "), code, out, errs, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Error("a refused agent command created its run directory")
	}
}

// TestParseSize checks --swap-floor's sizes: binary units, as the kernel's
// memparse, and formatSize reading back.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100G": 100 << 30, "64M": 64 << 20, "512K": 512 << 10, "1.5GiB": 3 << 29, "2gb": 2 << 30, "4096": 4096, "10B": 10, "1T": 1 << 40} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1G", "1e9", "NaN", "1..2M", "10X", "9999999T", "1.5"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
	for _, n := range []int64{0, 1, 4096, 64 << 20, 3 << 29, 100 << 30} {
		if got, err := parseSize(formatSize(n)); err != nil || got != n {
			t.Errorf("formatSize(%d) = %q reads back as %d, %v", n, formatSize(n), got, err)
		}
	}
}

// TestAgentRunDirRules checks -o RUN of mdk agent before any work: a
// missing parent is an error and nothing is created; a directory holding a
// run is refused unless --force.
func TestAgentRunDirRules(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexist", "dir", "r1")
	code, _, errs := run(t, "", "agent", "--replay", example, "--policy", "age:A=1", "--window", "30s", "-o", missing)
	if code != ExitError || !strings.Contains(errs, "its parent") {
		t.Errorf("missing parent: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "nonexist")); err == nil {
		t.Error("the agent created the missing parent directories")
	}
	old := writeRun(t)
	code, _, errs = run(t, "", "agent", "--replay", example, "--policy", "age:A=1", "--window", "30s", "-o", old)
	if code != ExitError || !strings.Contains(errs, "already holds a run") || !strings.Contains(errs, "--force") {
		t.Errorf("existing run: exit %d, %q", code, errs)
	}
}

// TestCompareDamagedRun checks mdk agent compare and mdk report RUN on
// damaged run directories: exit 1 and one line naming the file, never a
// comparison that calls the damage residual.
func TestCompareDamagedRun(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		edit       func(string) string
		want       string
	}{
		{"no saved column", "measured.csv", func(s string) string {
			lines := strings.Split(strings.TrimSpace(s), "\n")
			for i, l := range lines {
				f := strings.Split(l, ",")
				lines[i] = strings.Join(append(f[:2:2], f[3:]...), ",") // saved is the third column
			}
			return strings.Join(lines, "\n") + "\n"
		}, `measured.csv:1: no "saved" column`},
		{"truncated skipped.csv", "skipped.csv", func(s string) string { return s + "1,2,refu" }, `skipped.csv:2: cause "refu"`},
		{"negative count", "measured.csv", func(s string) string { return strings.Replace(s, "\n1,0,3,", "\n1,0,-3,", 1) }, "measured.csv:3: saved -3: a count is not negative"},
		{"window 1h on a 30s trace", "run.json", func(s string) string { return strings.Replace(s, `"30s"`, `"1h"`, 1) }, "run.json: window 1h, but"},
		{"setting damaged", "run.json", func(s string) string { return strings.Replace(s, `"age:A=1"`, `"age:A=x"`, 1) }, `run.json: setting "age:A=x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRun(t)
			p := filepath.Join(dir, tc.file)
			b, _ := os.ReadFile(p)
			if s := tc.edit(string(b)); s == string(b) {
				t.Fatal("the edit changed nothing")
			} else {
				os.WriteFile(p, []byte(s), 0o644)
			}
			for _, args := range [][]string{{"agent", "compare", dir}, {"report", dir, "-o", filepath.Join(t.TempDir(), "r.html")}} {
				code, _, errs := run(t, "", args...)
				if code != ExitError || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 || strings.Contains(errs, "--policy") {
					t.Errorf("mdk %s: exit %d, stderr %q; want exit 1 and one line with %q", args[0], code, errs, tc.want)
				}
			}
		})
	}
}

// TestCompareTextWidth checks that mdk agent compare's text fits in 100
// columns and prints no 17-digit floats, while JSON keeps full precision.
func TestCompareTextWidth(t *testing.T) {
	dir := writeRun(t)
	code, out, errs := run(t, "", "agent", "compare", dir)
	if code != 0 {
		t.Fatal(errs)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 100 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	if strings.Contains(out, "0.47058823529411764") || !strings.Contains(out, "47.0588%") {
		t.Errorf("savings not as a readable percentage:\n%s", out)
	}
	_, js, _ := run(t, "", "agent", "compare", dir, "--format", "json")
	if !strings.Contains(js, "0.47058823529411764") {
		t.Errorf("JSON lost precision:\n%s", js)
	}
}

// TestTierFileChecks checks the tier files a new user wrote: without
// promotion_ns (charged 0 ns per promotion), with a stored size above the
// page, with a latency of 1e300 ns: each refused naming the field.
func TestTierFileChecks(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct{ json, want string }{
		"no promotion_ns": {`{"name": "t", "page_size_bytes": 4096, "stored_bytes_per_page": 1024}`, "promotion_ns.mean: missing or 0"},
		"stored > page":   {`{"name": "t", "page_size_bytes": 4096, "stored_bytes_per_page": 5000, "promotion_ns": {"mean": 5000}}`, "stored_bytes_per_page: 5000 is more than the page of 4096 bytes"},
		"1e300 ns":        {`{"name": "t", "page_size_bytes": 4096, "promotion_ns": {"mean": 1e300}}`, "promotion_ns.mean: 1e+300 ns is more than a minute"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		os.WriteFile(p, []byte(tc.json), 0o644)
		code, _, errs := run(t, "", "mpc", example, "-p", "age:A=1", "--tier", p)
		if code == 0 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, p) {
			t.Errorf("%s: exit %d, %q; want an error naming %s with %q", name, code, errs, p, tc.want)
		}
	}
}

// TestOutputCheckedFirst checks that an output path that cannot be written
// fails the command before its work: the error is about the output even
// when the input would fail too (the work comes after).
func TestOutputCheckedFirst(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "nonexist", "out")
	for _, args := range [][]string{
		{"lopp", "train", "no-such-trace.mdkt", "-o", bad + ".json"},
		{"report", "no-such-trace.mdkt", "-o", bad + ".html"},
		{"mpc", "no-such-trace.mdkt", "--plot", bad + ".svg"},
	} {
		code, _, errs := run(t, "", args...)
		if code != ExitError || !strings.Contains(errs, "create "+bad) {
			t.Errorf("mdk %s: exit %d, %q; want the output's error first", strings.Join(args, " "), code, errs)
		}
	}
}

// TestFleetAllFailed checks that mdk fleet exits 1 when every job failed,
// with the files (and their errors) written.
func TestFleetAllFailed(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "jobs.txt")
	os.WriteFile(list, []byte(filepath.Join(dir, "gone1.txt")+"\n"+filepath.Join(dir, "gone2.txt")+"\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, errs := run(t, "", "fleet", list, "--window", "30s", "-p", "age:A=1", "-o", out)
	if code != ExitError || !strings.Contains(errs, "every one of the 2 jobs failed") || !strings.Contains(stdout, "2 jobs, 2 failed") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "jobs.csv")); err != nil {
		t.Errorf("jobs.csv not written: %v", err)
	}
}

// TestRecordExactFailedProgram checks that mdk record --exact exits with
// the program's status when it fails, the trace of what it did written.
func TestRecordExactFailedProgram(t *testing.T) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("valgrind missing")
		}
		t.Skip("valgrind missing")
	}
	gz, err := exec.LookPath("gzip")
	if err != nil {
		t.Skip("gzip missing")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "gzip.mdkt")
	code, _, errs := run(t, "", "record", "--exact", "-o", out, "--", gz, "-k", filepath.Join(dir, "missing.file"))
	if code != 1 || !strings.Contains(errs, "the program failed (exit status 1)") {
		t.Errorf("exit %d, stderr %q; want gzip's status 1", code, errs)
	}
	if code, _, errs := run(t, "", "stats", out); code != 0 {
		t.Errorf("the failed program's trace: %s", errs)
	}
}

// fakeTTY is a standard error that says it is a terminal.
type fakeTTY struct{ strings.Builder }

func (*fakeTTY) IsTerminal() bool { return true }

// TestProgressOnTerminal checks that the long commands (verify, lopp
// train, tune, mpc) draw a progress line on a terminal's standard error,
// clear it at the end, and print nothing of it when standard error is not
// a terminal (a log, a pipe).
func TestProgressOnTerminal(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"verify", example, "-p", "age:A=0..2"}, []string{"\rverify: generator: window 1/10 (10%)", "\rverify: simulator: window 1/10 (10%)"}},
		{[]string{"lopp", "train", example, "--rounds", "3", "-o", filepath.Join(dir, "m.json")}, []string{"\rlopp train: round 1/3 (33%)"}},
		{[]string{"tune", example, "--slo", "max_pr<=50%", "-p", "age:A=1..2"}, []string{"\rtune: window 1/10 (10%)"}},
		{[]string{"mpc", example, "-p", "age:A=1"}, []string{"\rmpc: window 1/10 (10%)"}},
	} {
		var out strings.Builder
		tty := &fakeTTY{}
		code := Run(t.Context(), tc.args, strings.NewReader(""), &out, tty)
		if code != 0 {
			t.Errorf("mdk %s: exit %d: %s", strings.Join(tc.args, " "), code, tty.String())
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(tty.String(), w) {
				t.Errorf("mdk %s: no %q on the terminal: %q", strings.Join(tc.args, " "), w, tty.String())
			}
		}
		if s := tty.String(); !strings.HasPrefix(s[max(strings.LastIndex(s, "\r"), 0):], "\r\033[K") {
			t.Errorf("mdk %s: the progress line is not cleared at the end: %q", strings.Join(tc.args, " "), tty.String())
		}
		_, _, errs := run(t, "", tc.args...)
		if strings.Contains(errs, "\r") {
			t.Errorf("mdk %s: progress on a standard error that is not a terminal: %q", strings.Join(tc.args, " "), errs)
		}
	}
}
