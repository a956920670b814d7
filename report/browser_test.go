package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// selfCheck is what report.js writes into #selfcheck.
type selfCheck struct {
	Errors     []string `json:"errors"`
	Violations []string `json:"violations"`
	Resources  []string `json:"resources"`
	Charts     map[string]struct {
		Series int  `json:"series"`
		Points int  `json:"points"`
		Canvas bool `json:"canvas"`
		Inked  int  `json:"inked"`
	} `json:"charts"`
	RenderMs float64  `json:"renderMs"`
	Sorted   []string `json:"sorted"`
	Tune     *struct {
		Rows     int      `json:"rows"`
		Policies int      `json:"policies"`
		Broken   []string `json:"broken"`
		Agrees   bool     `json:"agrees"`
	} `json:"tune"`
	Controllers []struct {
		Rows       int      `json:"rows"`
		Shown      bool     `json:"shown"`
		Sentence   string   `json:"sentence"`
		Savings    *float64 `json:"savings"`
		Headroom   *float64 `json:"headroom"`
		OPPSavings *float64 `json:"oppSavings"`
	} `json:"controllers"`
	Predicted *struct {
		Rows       int  `json:"rows"`
		Adds       int  `json:"adds"`
		Windows    int  `json:"windows"`
		Agrees     bool `json:"agrees"`
		MemoryRows int  `json:"memoryRows"`
	} `json:"predicted"`
	Design *struct {
		Rows       int       `json:"rows"`
		Headroom   []float64 `json:"headroom"`
		CauseSums  []float64 `json:"causeSums"`
		RegionSums []float64 `json:"regionSums"`
	} `json:"design"`
}

// chromiumArgs are the flags of the issue: headless, no sandbox (tests run
// as root in containers), no GPU, no background network, fresh profile.
func chromiumArgs(t *testing.T) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--no-first-run", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
}

// openInBrowser loads url in headless chromium and returns the DOM after
// the page's scripts ran, and chromium's log.
func openInBrowser(t *testing.T, chromium, url string) (dom, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append(chromiumArgs(t), "--dump-dom", url)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

var selfCheckRe = regexp.MustCompile(`(?s)<pre id="selfcheck"[^>]*>(.*?)</pre>`)

func readSelfCheck(t *testing.T, dom string) selfCheck {
	t.Helper()
	m := selfCheckRe.FindStringSubmatch(dom)
	if m == nil || strings.TrimSpace(m[1]) == "" {
		t.Fatalf("the page's script did not finish: no self-check in the DOM")
	}
	var c selfCheck
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &c); err != nil {
		t.Fatalf("self-check %q: %v", m[1], err)
	}
	return c
}

// TestReportInBrowser opens a report in headless chromium: no script
// error, no console message, no network request, every chart drawn with
// data, tables equal to the CSV, header clicks sort the table, and the
// tuning section shows a row per policy and a BROKEN badge exactly where
// the tune report says the SLO breaks.
func TestReportInBrowser(t *testing.T) {
	chromium := testutil.RequireTool(t, "chromium")
	d := testTuneData(t)
	targets := []float64{0.01, 0.02}
	path := filepath.Join(t.TempDir(), "report.html")
	var buf bytes.Buffer
	// MaxPoints below the trace's 300 windows: the down-sampled path runs.
	if err := Generate(&buf, d, Options{X: result.MaxPR, Targets: targets, LogX: true, MaxPoints: 100}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := openInBrowser(t, chromium, "file://"+path+"#sorttest")
	c := readSelfCheck(t, dom)
	if len(c.Errors) > 0 {
		t.Errorf("script errors: %q", c.Errors)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, ":CONSOLE(") {
			t.Errorf("console message: %s", line)
		}
	}
	if len(c.Violations) > 0 || len(c.Resources) > 0 {
		t.Errorf("the page tried to load: blocked %q, loaded %q", c.Violations, c.Resources)
	}
	// The curves: a line and a scatter per policy.
	wantSeries := map[string]int{"chart-mpc": 2 * 5, "chart-pr": 1, "chart-pages": 3, "chart-ws": 2, "chart-gaps": 2}
	if len(c.Charts) != len(wantSeries) {
		t.Errorf("%d charts drawn, want %d: %+v", len(c.Charts), len(wantSeries), c.Charts)
	}
	for id, n := range wantSeries {
		ch, ok := c.Charts[id]
		switch {
		case !ok:
			t.Errorf("chart %s not drawn", id)
		case !ch.Canvas || ch.Inked < 1000:
			t.Errorf("chart %s: canvas %v with %d inked pixels: looks empty", id, ch.Canvas, ch.Inked)
		case ch.Series != n || ch.Points == 0:
			t.Errorf("chart %s: %d series with %d points, want %d series with data", id, ch.Series, ch.Points, n)
		}
	}
	if p := c.Charts["chart-ws"].Points; p > 2*100 {
		t.Errorf("working-set chart draws %d points, want at most 2 x MaxPoints", p)
	}
	checkTablesAgainstCSV(t, dom, d.Results, result.MaxPR, targets)

	// Sorted by savings, descending, empty cells ("no setting meets") last.
	var last float64 = 2
	seenEmpty := false
	for i, v := range c.Sorted {
		if v == "" {
			seenEmpty = true
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f > last || seenEmpty {
			t.Fatalf("table not sorted by savings after two clicks: %q (at %d)", c.Sorted, i)
		}
		last = f
	}
	if len(c.Sorted) != len(readTable(t, dom, "best")) {
		t.Errorf("sort test saw %d rows", len(c.Sorted))
	}
	var wantBroken []string
	for _, p := range d.Tune.Policies {
		if p.Found && !p.Eval.MeetsSLO {
			wantBroken = append(wantBroken, p.Policy)
		}
	}
	switch {
	case c.Tune == nil:
		t.Error("the self-check did not see the tuning section")
	case !c.Tune.Agrees || c.Tune.Rows != len(d.Tune.Policies) || strings.Join(c.Tune.Broken, ",") != strings.Join(wantBroken, ","):
		t.Errorf("tuning section: %d rows, BROKEN badges on %q; want %d rows, badges on %q", c.Tune.Rows, c.Tune.Broken, len(d.Tune.Policies), wantBroken)
	}
	t.Logf("render %.0f ms", c.RenderMs)
}

// TestAgentChartInBrowser draws a report with an agent run in chromium: the
// agent chart has its four series (promotions and saved, predicted and
// measured), with ink, and the page runs without errors.
func TestAgentChartInBrowser(t *testing.T) {
	chromium := testutil.RequireTool(t, "chromium")
	d0 := testReport(t)
	d := *d0
	W := d.Results[0].Windows()
	a := &AgentRun{Dir: "run", Setting: "age:A=1", Tracker: "replay", Kernel: "test",
		Totals: [][3]string{{"promotions", "10", "9"}}, Explain: []string{"a sentence"}}
	for w := range W {
		a.PredPromotions = append(a.PredPromotions, int64(w%7))
		a.Promotions = append(a.Promotions, int64(w%5))
		a.PredSaved = append(a.PredSaved, int64(100+w))
		a.Saved = append(a.Saved, int64(90+w))
	}
	d.Agent = a
	path := filepath.Join(t.TempDir(), "report.html")
	var buf bytes.Buffer
	if err := Generate(&buf, &d, Options{MaxPoints: 100}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := openInBrowser(t, chromium, "file://"+path)
	c := readSelfCheck(t, dom)
	if len(c.Errors) > 0 {
		t.Errorf("script errors: %q", c.Errors)
	}
	ch, ok := c.Charts["chart-agent"]
	if !ok || ch.Series != 4 || ch.Points == 0 || !ch.Canvas || ch.Inked < 1000 {
		t.Errorf("agent chart: %+v (drawn %v), want 4 series with ink", ch, ok)
	}
}

// TestSampledCurvesInBrowser draws a sampled report in chromium, with ink
// and without script errors: every policy's curve has its points and
// frontier and no error bars, because savings bounds are not printed
// (result.PrintedBound; until 2026-12-02 a third series drew them).
func TestSampledCurvesInBrowser(t *testing.T) {
	chromium := testutil.RequireTool(t, "chromium")
	cfg := testConfig()
	var ss []policy.Setting
	for _, name := range []string{"age", "vmin", "opp"} {
		ss = append(ss, policy.DefaultGrid(name, cfg.Window)...)
	}
	rs, err := mpc.Generate(context.Background(), gen.NewReader(cfg), ss, mpc.Options{Sample: trace.Sample{PPM: 100_000, Seed: 1}, Groups: 10})
	if err != nil {
		t.Fatal(err)
	}
	d := *testReport(t)
	d.Results = rs
	var buf bytes.Buffer
	if err := Generate(&buf, &d, Options{MaxPoints: 100}); err != nil {
		t.Fatal(err)
	}
	var pl struct {
		Curves []struct {
			Points []struct {
				YE float64 `json:"ye"`
			} `json:"points"`
		} `json:"curves"`
	}
	m := payloadRe.FindSubmatch(buf.Bytes())
	if m == nil || json.Unmarshal(m[1], &pl) != nil || len(pl.Curves) != 3 {
		t.Fatal("no curves in the embedded data")
	}
	bars := 0
	for _, c := range pl.Curves {
		for _, p := range c.Points {
			if p.YE > 0 {
				bars++
			}
		}
	}
	// Savings bounds are not printed (result.PrintedBound, the rule of
	// docs/bench.md): no point has an error bar.
	if bars != 0 {
		t.Fatalf("%d points of a sampled report have a savings bound", bars)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := openInBrowser(t, chromium, "file://"+path)
	c := readSelfCheck(t, dom)
	if len(c.Errors) > 0 {
		t.Errorf("script errors: %q", c.Errors)
	}
	ch, ok := c.Charts["chart-mpc"]
	if !ok || ch.Series != 3*2 || !ch.Canvas || ch.Inked < 1000 {
		t.Errorf("curves chart: %+v (drawn %v), want 2 series per policy (points, frontier; no error bars) with ink", ch, ok)
	}
}

// generateInBrowser writes the report of d, opens it in headless chromium
// and returns its self-check, failing t on any script error, blocked or
// loaded resource.
func generateInBrowser(t *testing.T, chromium string, d *Data, opts Options) selfCheck {
	t.Helper()
	var buf bytes.Buffer
	if err := Generate(&buf, d, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := openInBrowser(t, chromium, "file://"+path)
	c := readSelfCheck(t, dom)
	if len(c.Errors) > 0 || len(c.Violations) > 0 || len(c.Resources) > 0 {
		t.Errorf("errors %q, blocked %q, loaded %q", c.Errors, c.Violations, c.Resources)
	}
	return c
}
