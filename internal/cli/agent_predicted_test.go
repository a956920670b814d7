package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestAgentComparePredictedFrom runs mdk agent compare --predicted-from on
// a hand-made run (SPEC section 4's trace, age:A=1 applied exactly) with
// the run's own trace as the recording: offset 0, Jaccard 1, the three
// predictions equal and every cause 0; a recording of other windows is the
// recording's error (exit 1), and --tier with it a usage error.
func TestAgentComparePredictedFrom(t *testing.T) {
	dir := writeRun(t)
	code, out, errs := run(t, "", "agent", "compare", dir, "--predicted-from", example, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	type pair struct{ Promotions, Saved int64 }
	var got struct {
		Offset int `json:"offset"`
		Total  struct {
			Jaccard        float64 `json:"jaccard"`
			Recorded       pair    `json:"recorded"`
			Counterfactual pair    `json:"counterfactual"`
			Measured       pair    `json:"measured"`
			Shift          pair    `json:"shift"`
			Workload       pair    `json:"workload"`
			Slack          pair    `json:"slack"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	tot := got.Total
	if got.Offset != 0 || tot.Jaccard != 1 || tot.Recorded != tot.Counterfactual || tot.Recorded != tot.Measured ||
		tot.Shift != (pair{}) || tot.Workload != (pair{}) || tot.Slack != (pair{}) || tot.Recorded.Promotions != 4 {
		t.Errorf("offset %d, total %+v: want offset 0, Jaccard 1, 4 promotions recorded = counterfactual = measured, no cause", got.Offset, tot)
	}
	code, out, _ = run(t, "", "agent", "compare", dir, "--predicted-from", example)
	if code != ExitOK || !strings.Contains(out, "promotions: recorded - measured = 0 = 0 (time shift) + 0 (workload)") {
		t.Errorf("text, exit %d:\n%s", code, out)
	}
	other := filepath.Join(t.TempDir(), "other.txt")
	ex, _ := os.ReadFile(example)
	os.WriteFile(other, []byte(strings.Replace(string(ex), "window 30s", "window 1m", 1)), 0o644)
	if code, _, errs := run(t, "", "agent", "compare", dir, "--predicted-from", other); code != ExitError || !strings.Contains(errs, "other.txt: windows of 1m0s") {
		t.Errorf("other windows: exit %d: %s", code, errs)
	}
	if code, _, _ := run(t, "", "agent", "compare", dir, "--predicted-from", example, "--tier", "ssd"); code != ExitUsage {
		t.Errorf("--tier with --predicted-from: exit %d, want %d", code, ExitUsage)
	}
}

// predictedJSONRe finds the JSON mdk report --predicted-from embeds.
var predictedJSONRe = regexp.MustCompile(`(?s)<script id="predicted-json" type="application/json">(.*?)</script>`)

// TestReportPredictedFrom: mdk report RUN --predicted-from RECORDING has the
// section, and the JSON it embeds is the object mdk agent compare RUN
// --predicted-from RECORDING --format json prints (one computation, rendered
// twice); --predicted-from with a trace instead of a run is a usage error.
func TestReportPredictedFrom(t *testing.T) {
	dir := writeRun(t)
	html := filepath.Join(t.TempDir(), "run.html")
	if code, _, errs := run(t, "", "report", dir, "--predicted-from", example, "-p", "age", "-o", html); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	m := predictedJSONRe.FindSubmatch(b)
	if m == nil {
		t.Fatal("the report embeds no #predicted-json")
	}
	_, out, _ := run(t, "", "agent", "compare", dir, "--predicted-from", example, "--format", "json")
	var got, want any
	if err := json.Unmarshal(m[1], &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("embedded JSON differs from agent compare's:\n%s\nwant\n%s", m[1], out)
	}
	for _, s := range []string{"Predicted from a recording", `id="chart-predicted-curves"`, `"predicted":{"setting":"age:A=1"`, `"recCurves":[{"policy":"age"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if code, _, errs := run(t, "", "report", example, "--predicted-from", example, "-o", html); code != ExitUsage || !strings.Contains(errs, "needs a run directory") {
		t.Errorf("a trace with --predicted-from: exit %d: %s", code, errs)
	}
	if code, _, errs := run(t, "", "report", filepath.Join(t.TempDir(), "none"), "--predicted-from", example, "-o", html); code != ExitError || !strings.Contains(errs, "no such file") {
		t.Errorf("a missing run with --predicted-from: exit %d: %s", code, errs)
	}
}
