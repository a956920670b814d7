package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"mdk/agent"
	"mdk/internal/testutil"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/stats"
	"mdk/trace"
)

// The fixture testdata/predicted is a real run (testdata/predicted/README.md):
// a replay on zram swap, made by internal/cli's TestReportPredictedFromReplay.
const (
	fixtureRun = "testdata/predicted/run"
	fixtureRec = "testdata/predicted/recording.mdkt"
)

func readTraceFile(t *testing.T, path string) *trace.Trace {
	t.Helper()
	rd, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := trace.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// predictedData is the report of the fixture's run with the fixture's
// recording beside it, as mdk report RUN --predicted-from RECORDING -p age
// -p paw makes it.
func predictedData(t *testing.T) *Data {
	t.Helper()
	info, err := agent.ReadRunInfo(fixtureRun)
	if err != nil {
		t.Fatal(err)
	}
	obs, rec := readTraceFile(t, filepath.Join(fixtureRun, agent.TraceFile)), readTraceFile(t, fixtureRec)
	ss, err := policy.Parse(info.Setting, obs.Header.Window)
	if err != nil || len(ss) != 1 {
		t.Fatalf("%s: %v", info.Setting, err)
	}
	p, err := agent.ComparePredicted(fixtureRun, fixtureRec, rec, ss[0])
	if err != nil {
		t.Fatal(err)
	}
	curves := func(tr *trace.Trace) []*result.Result {
		var grid []policy.Setting
		for _, name := range []string{"age", "paw"} {
			grid = append(grid, policy.DefaultGrid(name, tr.Header.Window)...)
		}
		rs, err := mpc.Generate(context.Background(), tr.NewReader(), grid, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	s, err := stats.Compute(obs.NewReader())
	if err != nil {
		t.Fatal(err)
	}
	a := &AgentRun{Dir: fixtureRun, Setting: info.Setting, Tracker: info.Tracker, Kernel: info.Kernel, Explain: p.Cmp.Explain(), Memory: &p.Cmp.Memory}
	for _, d := range p.Cmp.Windows {
		a.PredPromotions, a.Promotions = append(a.PredPromotions, d.PredPromotions), append(a.Promotions, d.Promotions)
		a.PredSaved, a.Saved = append(a.PredSaved, d.PredSaved), append(a.Saved, d.Saved)
	}
	return &Data{
		Agent: a,
		Trace: fixtureRun + "/trace.mdkt", Command: "mdk report " + fixtureRun + " --predicted-from " + fixtureRec, Version: "test",
		Stats: s, Results: curves(obs), Predicted: &PredictedRun{Dir: fixtureRun, P: p, RecCurves: curves(rec)},
	}
}

var predictedJSONRe = regexp.MustCompile(`(?s)<script id="predicted-json" type="application/json">(.*?)</script>`)

// TestPredictedSection: the section embeds exactly the JSON of mdk agent
// compare --predicted-from (agent.Predicted.JSON), has a promotions and a
// saved line per window and for the total, the memory table per window and
// its mean, and its charts' payload.
func TestPredictedSection(t *testing.T) {
	d := predictedData(t)
	var buf bytes.Buffer
	if err := Generate(&buf, d, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	m := predictedJSONRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no #predicted-json")
	}
	var got, want any
	wb, _ := json.Marshal(d.Predicted.P.JSON())
	json.Unmarshal([]byte(m[1]), &got)
	json.Unmarshal(wb, &want)
	if got == nil || !jsonEqual(got, want) {
		t.Errorf("embedded JSON is not agent compare's")
	}
	W := len(d.Predicted.P.Windows)
	if n := strings.Count(page, `<tr class="pw"`); n != W+1 {
		t.Errorf("%d promotions lines, want %d windows and the total", n, W+1)
	}
	if n := strings.Count(page, `<tr class="pw-saved"`); n != W+1 {
		t.Errorf("%d saved lines, want %d", n, W+1)
	}
	// The agent section's memory table: the windows and the mean, window
	// 0's RSS in MiB.
	i := strings.Index(page, `id="agent-memory"`)
	j := strings.Index(page, `id="predicted"`)
	if i < 0 || j < i || strings.Count(page[i:j], "<tr>") != W+2 {
		t.Errorf("agent section's memory table missing or not %d rows and a header", W+1)
	} else if rss := agent.MiB(d.Predicted.P.Cmp.Memory.Windows[0].RSS); !strings.Contains(page[i:j], "<tr><td>0</td><td>0.0</td><td>"+rss+"</td>") {
		t.Errorf("agent memory table lacks window 0's rss %s", rss)
	}
	for _, s := range []string{`"predicted":{"setting":"age:A=2"`, `"recCurves":[{"policy":"age"`, "best alignment offset</th><td>-1 windows"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestPredictedInBrowser draws the fixture's section in chromium: every
// chart with its series and ink, no script error; the page's own check
// finds that every line of the per-window table adds up (recorded -
// measured = the sum of the causes, read from the cells) and that the
// total line and the causes table are the embedded JSON's. The same page
// with one cause cell altered must fail both checks: the check can fail.
func TestPredictedInBrowser(t *testing.T) {
	chromium := testutil.RequireTool(t, "chromium")
	d := predictedData(t)
	W := len(d.Predicted.P.Windows)
	c := generateInBrowser(t, chromium, d, Options{})
	want := map[string]int{"chart-agent": 4, "chart-predicted-promotions": 4, "chart-predicted-saved": 4, "chart-predicted-cause-promotions": 7,
		"chart-predicted-cause-saved": 7, "chart-predicted-jaccard": 2, "chart-predicted-curves": 2 + 2 + 3, "chart-predicted-memory": 5}
	for id, n := range want {
		ch, ok := c.Charts[id]
		if !ok || ch.Series != n || ch.Points == 0 || !ch.Canvas || ch.Inked < 1000 {
			t.Errorf("%s: %+v (drawn %v), want %d series with ink", id, ch, ok, n)
		}
	}
	p := c.Predicted
	if p == nil || p.Rows != 2*(W+1) || p.Adds != p.Rows || !p.Agrees || p.Windows != W || p.MemoryRows != W+1 {
		t.Fatalf("self-check %+v: want %d lines all adding up, agreeing with the JSON, %d memory rows", p, 2*(W+1), W+1)
	}

	// One cause of the total line altered.
	var buf bytes.Buffer
	if err := Generate(&buf, d, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	i := strings.Index(page, `<tr class="pw" data-window="total">`)
	j := i + strings.Index(page[i:], `data-col="workload" data-v="`) + len(`data-col="workload" data-v="`)
	page = page[:j] + "1" + page[j:] // -477 becomes 1-477: not a number, or another one
	path := filepath.Join(t.TempDir(), "bad.html")
	os.WriteFile(path, []byte(page), 0o644)
	dom, _ := openInBrowser(t, chromium, "file://"+path)
	bad := readSelfCheck(t, dom).Predicted
	if bad == nil || bad.Adds != bad.Rows-1 || bad.Agrees {
		t.Errorf("altered page: self-check %+v: want one line not adding up and no agreement", bad)
	}
}

// TestPredictedSVGs: --svg writes the section's figures too.
func TestPredictedSVGs(t *testing.T) {
	dir := t.TempDir()
	paths, err := WriteSVGs(dir, predictedData(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"predicted-promotions.svg", "predicted-saved.svg", "predicted-memory.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.Contains(string(b), "counterfactual") && name != "predicted-memory.svg" || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: %v (%d paths)", name, err, len(paths))
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "predicted-memory.svg")); !strings.Contains(string(b), "zram") {
		t.Error("the memory figure has no zram line")
	}
}
