package report

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/gen"
	"mdk/result"
	"mdk/tune"
)

// testTuneData returns testReport's data with Tune set: tune.Run on the
// same trace with the same policies (the default grids), except a paw grid
// that stops short of P=inf, max_pr<=2% and the default half/half window split.
// On this trace age, vmin and pace break the SLO on the second half, the
// short paw grid has no setting meeting it and opp meets it. (Every default
// grid ends with a setting that meets any SLO.)
func testTuneData(t testing.TB) *Data {
	t.Helper()
	slo, err := tune.ParseSLO("max_pr<=2%")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := tune.Run(context.Background(), tune.Config{SLO: slo,
		Policies: []string{"age", "vmin", "opp", "paw:P=0..16", "pace"},
		Traces:   []tune.Input{{Name: "gen-test.mdkt", Reader: gen.NewReader(testConfig())}}})
	if err != nil {
		t.Fatal(err)
	}
	d := *testReport(t)
	d.Tune = rep
	return &d
}

var payloadRe = regexp.MustCompile(`(?s)<script id="mdk-data" type="application/json">(.*?)</script>`)

// embeddedTune returns the "tune" member of the page's JSON data, decoded
// generically (nil if absent).
func embeddedTune(t *testing.T, page string) any {
	t.Helper()
	m := payloadRe.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no embedded data")
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(m[1]), &p); err != nil {
		t.Fatalf("embedded data: %v", err)
	}
	return p["tune"]
}

// TestGenerateTune checks the Tuning section against tune.Run's report, and
// the chosen settings' eval numbers against the report's own per-window
// results of the same settings (computed by a separate mpc run), summed here
// by hand over the eval windows.
func TestGenerateTune(t *testing.T) {
	d := testTuneData(t)
	rep := d.Tune
	rep.Warnings = append(rep.Warnings, "a test warning <b>")
	defer func() { rep.Warnings = rep.Warnings[:len(rep.Warnings)-1] }()
	var buf bytes.Buffer
	if err := Generate(&buf, d, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	text := html.UnescapeString(page)

	// The embedded JSON is mdk tune --json's.
	var want any
	var js bytes.Buffer
	if err := tune.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, embeddedTune(t, page)); diff != "" {
		t.Errorf("embedded tune report differs from mdk tune --json (-want +got):\n%s", diff)
	}

	// The words and parts of mdk tune's terminal output.
	for _, s := range []string{`<section id="tuning">`, "SLO max_pr<=2%; settings chosen on the train part, measured on the eval part.",
		"<th>train</th><td>gen-test.mdkt windows 0..149 (150 of 300)</td>", "<th>eval</th><td>gen-test.mdkt windows 150..299 (150 of 300)</td>",
		"<th>chosen on train</th><th>train max_pr</th><th>train savings</th><th>eval max_pr</th><th>eval savings</th><th>eval windows > 2%</th><th>eval SLO</th><th>OPP headroom</th>",
		"Yardstick: opp:" + rep.OPP.Params + ", best of 50 OPP settings chosen on the eval part itself (an oracle's optimum there, not a tuned setting)",
		`<p class="warn">warning: a test warning <b></p>`} {
		if !strings.Contains(text, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if strings.Contains(page, "a test warning <b>") {
		t.Error("a warning is not HTML-escaped")
	}

	rows := readTable(t, page, "tune")
	if len(rows) != len(rep.Policies) {
		t.Fatalf("tune table has %d rows, want %d", len(rows), len(rep.Policies))
	}
	var broken, none, met int
	for i, c := range rep.Policies {
		row := rows[i]
		if row.policy != c.Policy || row.params != c.Params {
			t.Errorf("row %d is %s:%s, want %s:%s", i, row.policy, row.params, c.Policy, c.Params)
		}
		if !c.Found {
			none++
			if len(row.values) != 1 {
				t.Errorf("%s: no setting found, but the row has %q", c.Policy, row.values)
			}
			continue
		}
		verdict := "met"
		if !c.Eval.MeetsSLO {
			verdict = "BROKEN"
			broken++
		} else {
			met++
		}
		wantCols := map[string]string{
			"settings": strconv.Itoa(c.Settings), "trainstat": result.FormatFloat(c.Train.Stat), "trainsavings": result.FormatFloat(c.Train.Savings),
			"evalstat": result.FormatFloat(c.Eval.Stat), "evalsavings": result.FormatFloat(c.Eval.Savings),
			"broken": strconv.Itoa(c.Eval.BrokenWindows), "verdict": verdict, "headroom": result.FormatFloat(c.OPPHeadroom),
		}
		if diff := cmp.Diff(wantCols, row.cols); diff != "" {
			t.Errorf("%s:%s: row differs from tune.Run (-want +got):\n%s", c.Policy, c.Params, diff)
		}

		// Independently: the same setting's per-window results of the
		// report's curves, over the eval windows.
		var r *result.Result
		for _, x := range d.Results {
			if x.Policy == c.Policy && x.Params == c.Params {
				r = x
			}
		}
		if r == nil {
			t.Fatalf("%s:%s not among the report's results", c.Policy, c.Params)
		}
		seg := rep.Eval.Segments[0]
		var saved, alive int64
		var brokenW int
		maxPR := 0.0
		for w := seg.First; w <= seg.Last; w++ {
			saved += r.SavedPerWindow[w]
			alive += r.AlivePerWindow[w]
			if r.Promotions[w]*1_000_000 > rep.SLO.PPM*r.Accessed[w] {
				brokenW++
			}
			if r.Accessed[w] > 0 {
				maxPR = max(maxPR, float64(r.Promotions[w])/float64(r.Accessed[w]))
			}
		}
		if got := row.cols["evalsavings"]; got != result.FormatFloat(float64(saved)/float64(alive)) {
			t.Errorf("%s:%s: eval savings %s, but the curves' windows give %d/%d", c.Policy, c.Params, got, saved, alive)
		}
		if got := row.cols["broken"]; got != strconv.Itoa(brokenW) {
			t.Errorf("%s:%s: %s broken eval windows, the curves' windows give %d", c.Policy, c.Params, got, brokenW)
		}
		if got := row.cols["evalstat"]; got != result.FormatFloat(maxPR) {
			t.Errorf("%s:%s: eval max_pr %s, the curves' windows give %v", c.Policy, c.Params, got, maxPR)
		}
		if (maxPR > 0.02) != (verdict == "BROKEN") {
			t.Errorf("%s:%s: verdict %s with eval max_pr %v", c.Policy, c.Params, verdict, maxPR)
		}
	}
	// A drifting setting is flagged beside its row, with its windows.
	drifts := 0
	for _, c := range rep.Policies {
		if c.Drift == nil {
			continue
		}
		drifts++
		if !strings.Contains(text, `<span class="tune-note">`+c.Note(rep.SLO.Stat.String())+`</span>`) {
			t.Errorf("%s:%s drifts, but the page lacks its note %q", c.Policy, c.Params, c.Note(rep.SLO.Stat.String()))
		}
	}
	if drifts == 0 || strings.Count(page, `class="tune-note"`) != drifts {
		t.Errorf("%d drifting rows, %d notes: want at least one, one each", drifts, strings.Count(page, `class="tune-note"`))
	}
	// The trace is chosen so that every kind of row appears.
	if broken == 0 || none == 0 || met == 0 {
		t.Errorf("want broken, unfound and met rows; got %d, %d, %d", broken, none, met)
	}
	if n := strings.Count(page, `<span class="badge broken"`); n != broken {
		t.Errorf("%d BROKEN badges, want %d", n, broken)
	}

	// Without Tune, no section and no data.
	buf.Reset()
	if err := Generate(&buf, testReport(t), Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `id="tuning"`) || embeddedTune(t, buf.String()) != nil {
		t.Error("a report without Tune has a tuning section or tune data")
	}
}

// TestGenerateTuneNoYardstick: a report with no OPP setting meeting the SLO
// says so, as mdk tune does; several segments are listed as pooled.
func TestGenerateTuneNoYardstick(t *testing.T) {
	d := testTuneData(t)
	rep := *d.Tune
	rep.OPP = nil
	rep.Train.Segments = append(rep.Train.Segments, tune.Segment{Trace: "other.mdkt", First: 0, Last: 9, TraceWindows: 10})
	rep.Train.Windows += 10
	d.Tune = &rep
	var buf bytes.Buffer
	if err := Generate(&buf, d, Options{}); err != nil {
		t.Fatal(err)
	}
	text := html.UnescapeString(buf.String())
	for _, s := range []string{"Yardstick: no OPP setting meets max_pr<=2% on the eval part.",
		"160 windows pooled from:<br>gen-test.mdkt windows 0..149 (150 of 300)<br>other.mdkt whole trace, windows 0..9 (10)"} {
		if !strings.Contains(text, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

// TestCurvesViewAtTargets checks that the curves chart opens on the
// targets (twice the largest one), not on the whole 0-100% range.
func TestCurvesViewAtTargets(t *testing.T) {
	d := testReport(t)
	var buf bytes.Buffer
	if err := Generate(&buf, d, Options{Targets: []float64{0.005, 0.02, 0.05}}); err != nil {
		t.Fatal(err)
	}
	m := payloadRe.FindStringSubmatch(buf.String())
	if m == nil {
		t.Fatal("no embedded data")
	}
	var p struct {
		XView float64 `json:"xView"`
	}
	if err := json.Unmarshal([]byte(m[1]), &p); err != nil {
		t.Fatal(err)
	}
	if p.XView != 10 {
		t.Errorf("xView = %v, want 10 (percent: twice the 5%% target)", p.XView)
	}
	if !strings.Contains(buf.String(), "endValue: D.xView") {
		t.Error("the curves chart does not open on D.xView")
	}
}
