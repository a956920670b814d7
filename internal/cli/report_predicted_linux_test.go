//go:build linux

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mdk/agent"
	"mdk/internal/testutil"
	"mdk/trace"
)

// delayed returns t one window late: window w's events in window w+1, the
// first window empty, the last one dropped (the same number of windows).
func delayed(t *trace.Trace) *trace.Trace {
	b := trace.NewBuilder(t.Header)
	for w, win := range t.Windows {
		if w+1 >= len(t.Windows) {
			break
		}
		for _, ev := range []struct {
			kind trace.Kind
			ids  []uint32
		}{{trace.Access, win.Accessed}, {trace.Birth, win.Born}, {trace.Free, win.Freed}} {
			for _, id := range ev.ids {
				b.Add(w+1, ev.kind, t.Pages[id])
			}
		}
	}
	return b.Trace()
}

// TestReportPredictedFromReplay is the workflow of docs/e2e.md on the host,
// with the replay tracker: a baseline run of an application with no
// reclaim (mdk agent --replay --dry-run of an mdk gen mix), whose observed
// trace is the recording; the setting deployed on a run of the application
// started one window late and whose scan repeats every 6 windows instead of
// 10; mdk report RUN --predicted-from the recording. The report embeds
// mdk agent compare's JSON; the best offset is -1 (the run is late by one
// window); the time shift and the workload both carry part of the
// difference; the causes add up in every window with no tracker slack
// (a replay); the run's memory is known. With MDK_WRITE_FIXTURE=DIR the
// recording and the run are copied into DIR (report/testdata/predicted is
// made so: report's browser test draws it).
func TestReportPredictedFromReplay(t *testing.T) {
	testutil.SetupZram(t, 128<<20)
	dir := t.TempDir()
	app := filepath.Join(dir, "app.mdkt")
	if code, _, stderr := run(t, "", "gen", "--model", "mix", "--pages", "3000", "--windows", "12", "--window", "1s", "--seed", "3", "-o", app); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	changed := filepath.Join(dir, "changed.mdkt")
	if code, _, stderr := run(t, "", "gen", "--model", "mix", "--pages", "3000", "--windows", "12", "--window", "1s", "--seed", "3",
		"--param", "scan.Period=6", "-o", changed); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	rd, c, err := trace.Open(changed)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := trace.ReadAll(rd)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(dir, "late.mdkt")
	os.WriteFile(late, testutil.EncodeBinary(t, delayed(ch)), 0o644)

	t.Setenv("MDK_CLI_AS_MDK", "1")
	base, runDir := filepath.Join(dir, "baseline"), filepath.Join(dir, "run")
	if code, _, stderr := run(t, "", "agent", "--replay", app, "--dry-run", "--policy", "age:A=2", "--window", "1s", "--psi", "0", "--log", "", "-o", base); code != 0 {
		t.Fatalf("baseline: exit %d: %s", code, stderr)
	}
	rec := filepath.Join(base, agent.TraceFile)
	if code, _, stderr := run(t, "", "agent", "--replay", late, "--policy", "age:A=2", "--window", "1s", "--psi", "0", "--log", "", "-o", runDir); code != 0 {
		t.Fatalf("agent: exit %d: %s", code, stderr)
	}
	html := filepath.Join(dir, "run.html")
	if code, _, stderr := run(t, "", "report", runDir, "--predicted-from", rec, "-p", "age", "-p", "paw", "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	m := predictedJSONRe.FindSubmatch(b)
	code, out, stderr := run(t, "", "agent", "compare", runDir, "--predicted-from", rec, "--format", "json")
	if m == nil || code != 0 {
		t.Fatalf("no embedded JSON (%v), or compare: exit %d: %s", m == nil, code, stderr)
	}
	var embedded, want any
	json.Unmarshal(m[1], &embedded)
	json.Unmarshal([]byte(out), &want)
	if embedded == nil || !reflect.DeepEqual(embedded, want) {
		t.Errorf("the report's JSON is not agent compare's")
	}
	var p agent.PredictedJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	tot := p.Total
	if p.Offset != -1 || tot.JaccardAligned <= tot.Jaccard {
		t.Errorf("offset %d, Jaccard %.3f unaligned %.3f aligned: want -1 and better aligned", p.Offset, tot.Jaccard, tot.JaccardAligned)
	}
	if tot.Shift == (agent.Pair{}) || tot.Workload == (agent.Pair{}) || tot.Counterfactual.Saved == 0 {
		t.Errorf("total %+v: want a time shift, a workload term and savings", tot)
	}
	for _, w := range append(p.Windows, tot) {
		if w.Causes() != (agent.Pair{Promotions: w.Recorded.Promotions - w.Measured.Promotions, Saved: w.Recorded.Saved - w.Measured.Saved}) || w.Slack != (agent.Pair{}) {
			t.Errorf("window %d: causes %+v, recorded %+v, measured %+v, slack %+v", w.Window, w.Causes(), w.Recorded, w.Measured, w.Slack)
		}
	}
	if !p.Memory.Known || p.Memory.Mean.RSS <= 0 {
		t.Errorf("memory %+v", p.Memory)
	}
	for _, s := range []string{"Predicted from a recording", `id="chart-predicted-memory"`, `"recCurves":[{"policy":"age"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if out := os.Getenv("MDK_WRITE_FIXTURE"); out != "" {
		copyFile(t, rec, filepath.Join(out, "recording.mdkt"))
		for _, f := range []string{agent.TraceFile, agent.MeasuredFile, agent.SkippedFile, agent.MetaFile} {
			copyFile(t, filepath.Join(runDir, f), filepath.Join(out, "run", f))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(to), 0o755)
	}
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
