package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// writeValidRun writes a complete run directory by hand: SPEC section 4's
// trace observed, age:A=1 decided as the simulator decides, the first
// decided pages kept by the page limit (skipped.csv), every later decision
// reclaimed, the measured promotions and saved page-windows the
// simulator's, and run.json's totals the sums.
func writeValidRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ex, err := os.ReadFile("../testdata/example.txt")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, TraceFile), ex, 0o644)
	rd, c, err := trace.Open(filepath.Join(dir, TraceFile))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(rd)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := policy.Parse("age:A=1", tr.Header.Window)
	if err != nil {
		t.Fatal(err)
	}
	decided := make([][]uint32, len(tr.Windows))
	res := sim.RunObserved(tr, ss[0], func(p uint32, _, at int) { decided[at] = append(decided[at], p) })
	var m, sk strings.Builder
	m.WriteString(strings.Join(Columns(), ",") + "\n")
	sk.WriteString("window,page,cause\n")
	var sum Summary
	first := 0 // the first window with decisions: its pages are kept by the limit
	for len(decided[first]) == 0 {
		first++
	}
	for w := range tr.Windows {
		r := Row{Window: int64(w), Alive: res.AlivePerWindow[w], Accessed: res.Accessed[w], Decided: int64(len(decided[w])),
			Promotions: res.Promotions[w], Saved: res.SavedPerWindow[w], MajFlt: -1, PSISome: 0.5}
		if w == first {
			r.SkippedLimit = r.Decided
			for _, p := range decided[w] {
				fmt.Fprintf(&sk, "%d,%d,%s\n", w, p, CauseLimit)
			}
			sum.Skipped += r.Decided
		} else {
			r.Reclaimed, r.Out = r.Decided, r.Decided
		}
		m.WriteString(strings.Join(r.csvRecord(), ",") + "\n")
		sum.Windows++
		sum.Decided += r.Decided
		sum.Out += r.Out
		sum.Promotions += r.Promotions
		sum.Saved += r.Saved
	}
	if sum.Skipped == 0 || sum.Out == 0 {
		t.Fatal("the hand-made run skips or reclaims nothing: the test checks nothing")
	}
	os.WriteFile(filepath.Join(dir, MeasuredFile), []byte(m.String()), 0o644)
	os.WriteFile(filepath.Join(dir, SkippedFile), []byte(sk.String()), 0o644)
	info := RunInfo{Setting: "age:A=1", Window: "30s", Tracker: "replay", Targets: []int{42}, MaxPages: 100, Kernel: "test", Summary: &sum}
	b, _ := json.MarshalIndent(info, "", "  ")
	os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644)
	return dir
}

// edit rewrites file name of run dir with f.
func edit(t *testing.T, dir, name string, f func(string) string) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(f(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceLine replaces line n (1-based) of s by f of it.
func replaceLine(n int, f func(string) string) func(string) string {
	return func(s string) string {
		lines := strings.Split(s, "\n")
		lines[n-1] = f(lines[n-1])
		return strings.Join(lines, "\n")
	}
}

// setCol sets column col of measured.csv's line n to v.
func setCol(n int, col, v string) func(string) string {
	return func(s string) string {
		head := strings.Split(strings.SplitN(s, "\n", 2)[0], ",")
		i := -1
		for k, h := range head {
			if h == col {
				i = k
			}
		}
		return replaceLine(n, func(l string) string {
			f := strings.Split(l, ",")
			f[i] = v
			return strings.Join(f, ",")
		})(s)
	}
}

// dropCol removes column col from every line of measured.csv.
func dropCol(col string) func(string) string {
	return func(s string) string {
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		i := strings.Index(","+lines[0]+",", ","+col+",")
		k := strings.Count(lines[0][:i], ",")
		for n, l := range lines {
			f := strings.Split(l, ",")
			lines[n] = strings.Join(append(f[:k:k], f[k+1:]...), ",")
		}
		return strings.Join(lines, "\n") + "\n"
	}
}

// TestReadRunDamaged checks that a complete run reads back and compares
// with nothing unexplained, and that every kind of damage a new user met
// (issue 21) is an error of one line naming the file, and the line where
// there is one, instead of a "residual".
func TestReadRunDamaged(t *testing.T) {
	dir := writeValidRun(t)
	ss, _ := policy.Parse("age:A=1", 30*time.Second)
	c, err := Compare(dir, ss[0])
	if err != nil {
		t.Fatalf("a valid run: %v", err)
	}
	if c.Total.Decided != c.Total.PredDecided || c.Causes[CauseLimit] == 0 {
		t.Errorf("valid run: decided %d, predicted %d, causes %v", c.Total.Decided, c.Total.PredDecided, c.Causes)
	}
	for _, tc := range []struct {
		name, file string
		edit       func(string) string
		want       string // a regular expression
	}{
		{"no saved column", MeasuredFile, dropCol("saved"), `measured\.csv:1: no "saved" column`},
		{"no promotions column", MeasuredFile, dropCol("promotions"), `measured\.csv:1: no "promotions" column`},
		{"truncated skipped.csv", SkippedFile, func(s string) string { return s[:strings.LastIndex(s, "limit")+2] }, `skipped\.csv:\d+: cause "li": want refused:REASON`},
		{"cut refused cause", SkippedFile, func(s string) string { return strings.Replace(s, ",limit\n", ",refu\n", 1) }, `skipped\.csv:2: cause "refu"`},
		{"unknown cause", SkippedFile, func(s string) string { return strings.Replace(s, ",limit\n", ",bogus\n", 1) }, `skipped\.csv:2: cause "bogus"`},
		{"unknown refusal", SkippedFile, func(s string) string { return strings.Replace(s, ",limit\n", ",refused:nope\n", 1) }, `skipped\.csv:2: cause "refused:nope"`},
		{"lines lost at a line end", SkippedFile, func(s string) string { return s[:strings.Index(s, "\n")+1] }, `skipped\.csv: window \d+ has 0 lines of cause limit, but .*measured\.csv:\d+ says skipped_limit \d`},
		{"bad skipped header", SkippedFile, replaceLine(1, func(string) string { return "w,p,c" }), `skipped\.csv:1: header "w,p,c"`},
		{"negative saved", MeasuredFile, setCol(4, "saved", "-3"), `measured\.csv:4: saved -3: a count is not negative`},
		{"negative promotions", MeasuredFile, setCol(5, "promotions", "-1"), `measured\.csv:5: promotions -1: a count is not negative`},
		{"negative majflt", MeasuredFile, setCol(5, "majflt", "-2"), `measured\.csv:5: majflt -2`},
		{"psi over 100", MeasuredFile, setCol(3, "psi_some_avg10", "150"), `measured\.csv:3: psi_some_avg10 150: out of range`},
		{"NaN", MeasuredFile, setCol(3, "touches_per_sec", "NaN"), `measured\.csv:3: touches_per_sec: expected a number`},
		{"duplicate column", MeasuredFile, replaceLine(1, func(l string) string { return strings.Replace(l, "alive", "saved", 1) }), `measured\.csv:1: column "saved" twice`},
		{"promotions beyond accessed", MeasuredFile, setCol(3, "promotions", "9"), `measured\.csv:3: promotions 9, more than the 2 pages accessed in window 1`},
		{"saved beyond alive", MeasuredFile, setCol(3, "saved", "50"), `measured\.csv:3: promotions \d+ \+ saved 50, more than the \d+ pages alive in window 1`},
		{"accessed not the trace's", MeasuredFile, setCol(3, "accessed", "7"), `measured\.csv:3: accessed 7, but window 1 of the trace has 2`},
		{"decided not skipped+reclaimed", MeasuredFile, setCol(3, "decided", "7"), `measured\.csv:3: decided 7, but skipped \d+ \+ reclaimed \d+`},
		{"refused not its reasons", MeasuredFile, setCol(3, "refused", "1"), `measured\.csv:3: refused 1, but its reasons add up to 0`},
		{"window 1h on a 30s trace", MetaFile, func(s string) string { return strings.Replace(s, `"30s"`, `"1h"`, 1) }, `run\.json: window 1h, but .*trace\.mdkt has windows of 30s`},
		{"window not a duration", MetaFile, func(s string) string { return strings.Replace(s, `"30s"`, `"soon"`, 1) }, `run\.json: window "soon": want a positive duration`},
		{"unknown tracker", MetaFile, func(s string) string { return strings.Replace(s, `"replay"`, `"magic"`, 1) }, `run\.json: tracker "magic"`},
		{"summary not the sums", MetaFile, func(s string) string { return strings.Replace(s, `"saved": `, `"saved": 1`, 1) }, `run\.json: summary saved 1\d+, but .*measured\.csv adds up to`},
		{"negative summary", MetaFile, func(s string) string { return strings.Replace(s, `"decided": `, `"decided": -`, 1) }, `run\.json: summary: decided -\d+: want 0 or more`},
		{"json syntax", MetaFile, func(s string) string { return strings.Replace(s, `"tracker"`, `tracker`, 1) }, `run\.json: line 4: invalid character`},
		{"fewer rows than windows", MeasuredFile, func(s string) string { return s[:strings.LastIndex(strings.TrimSuffix(s, "\n"), "\n")+1] }, `measured\.csv has 9 windows, .*trace\.mdkt has 10`},
		{"dry run that reclaimed", MetaFile, func(s string) string { return strings.Replace(s, `"dry_run": false`, `"dry_run": true`, 1) }, `measured\.csv:\d+: \d+ pages reclaimed in a dry run`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := writeValidRun(t)
			edit(t, d, tc.file, tc.edit)
			_, err := Compare(d, ss[0])
			if err == nil {
				t.Fatalf("damaged %s accepted", tc.file)
			}
			msg := err.Error()
			if !regexp.MustCompile(tc.want).MatchString(msg) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line matching %q", msg, tc.want)
			}
			if !strings.Contains(msg, filepath.Join(d, "")) {
				t.Errorf("error %q does not name the run's file", msg)
			}
		})
	}
}

// TestRunInfoKeys checks that run.json is written with snake_case keys,
// every one of them, and that the CamelCase totals of older files are
// still read.
func TestRunInfoKeys(t *testing.T) {
	sum := Summary{Windows: 3, Decided: 4, Out: 5, Refused: 6, Skipped: 7, Promotions: 8, Saved: 9, KernelOut: 10, CPU: 11}
	b, err := json.Marshal(RunInfo{Setting: "age:A=1", Window: "1s", Tracker: "replay", Summary: &sum})
	if err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile(`"([^"]+)":`).FindAllStringSubmatch(string(b), -1)
	for _, k := range keys {
		if k[1] != strings.ToLower(k[1]) {
			t.Errorf("run.json key %q is not snake_case: %s", k[1], b)
		}
	}
	if !strings.Contains(string(b), `"kernel_out":10`) || !strings.Contains(string(b), `"cpu_ns":11`) {
		t.Errorf("run.json totals: %s", b)
	}
	dir := t.TempDir()
	old := `{"setting": "age:A=1", "window": "1s", "tracker": "replay", "summary": {"Windows": 3, "Decided": 4, "Out": 5, "Refused": 6, "Skipped": 7, "Promotions": 8, "Saved": 9, "KernelOut": 10, "CPU": 11}}`
	for _, in := range []string{old, string(b)} {
		os.WriteFile(filepath.Join(dir, MetaFile), []byte(in), 0o644)
		ri, err := ReadRunInfo(dir)
		if err != nil || ri.Summary == nil || *ri.Summary != sum {
			t.Errorf("%s: read %+v, %v; want %+v", in, ri.Summary, err, sum)
		}
	}
}

// TestCheckRunDir checks the run directory rules: a missing parent is an
// error (nothing is created), a directory holding a run is refused unless
// force, an empty or missing directory (with its parent) is fine, and a
// file is not a directory.
func TestCheckRunDir(t *testing.T) {
	base := t.TempDir()
	if err := CheckRunDir(filepath.Join(base, "nonexist", "dir", "r1"), false); err == nil || !strings.Contains(err.Error(), "its parent") {
		t.Errorf("missing parent: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "nonexist")); err == nil {
		t.Error("the missing parent was created")
	}
	if err := CheckRunDir(filepath.Join(base, "new"), false); err != nil {
		t.Errorf("a new run directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "new")); err == nil {
		t.Error("CheckRunDir created the directory")
	}
	run := writeValidRun(t)
	if err := CheckRunDir(run, false); err == nil || !strings.Contains(err.Error(), "already holds a run") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing run: %v", err)
	}
	if err := CheckRunDir(run, true); err != nil {
		t.Errorf("existing run with force: %v", err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644)
	if err := CheckRunDir(other, false); err != nil {
		t.Errorf("a directory without a run: %v", err)
	}
	if err := CheckRunDir(filepath.Join(other, "notes.txt"), false); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("a file: %v", err)
	}
	if err := makeRunDir(filepath.Join(base, "made"), false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(base, "made")); err != nil || !fi.IsDir() {
		t.Errorf("makeRunDir: %v", err)
	}
}
