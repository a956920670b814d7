package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/result"
	"mdk/sim"
	"mdk/tune"
)

// TestAutoEverywhere runs one controller through mdk sim, mdk mpc and mdk
// tune on SPEC section 4's trace and checks that each prints the numbers of
// sim.RunControlled: the same point, wherever a setting goes.
func TestAutoEverywhere(t *testing.T) {
	const path = "../../testdata/example.txt"
	const spec = "auto:age,A=0..3,slo=max_pr<=50%,history=4,every=2,margin=0%"
	_, want := exampleAuto(t, spec)
	if len(want.Switches) == 0 {
		t.Fatal("the controller never switches on the example: pick another spec")
	}
	rec := want.Result.Record(false)
	wantRow := strings.Join(rec.CSVRow(), ",")

	code, out, errOut := run(t, "", "sim", path, spec, "--json")
	if code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errOut)
	}
	var got struct {
		result.Record
		Settings []string `json:"settings"`
		Switches []struct {
			Window   int
			From, To string
		} `json:"switches"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.SavedPageWindows != rec.SavedPageWindows || got.Promotions != rec.Promotions || len(got.Switches) != len(want.Switches) || strings.Join(got.Settings, " ") != strings.Join(want.Settings, " ") {
		t.Errorf("sim --json: %+v, want %+v and settings %v", got, rec, want.Settings)
	}

	code, out, errOut = run(t, "", "mpc", path, "-p", "age:A=0..3", "-p", spec, "--csv")
	if code != 0 {
		t.Fatalf("mpc: exit %d: %s", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if last := strings.Join(rows[len(rows)-1], ","); last != wantRow {
		t.Errorf("mpc --csv: last row %q, want the controller's %q", last, wantRow)
	}
	if !strings.Contains(errOut, "switches") {
		t.Errorf("mpc: stderr %q does not count the switches", errOut)
	}

	code, out, errOut = run(t, "", "tune", path, "--slo", "max_pr<=50%", "-p", spec, "--json")
	if code != 0 {
		t.Fatalf("tune: exit %d: %s", code, errOut)
	}
	var rep tune.Report
	if err := json.Unmarshal([]byte(out), &struct {
		Controllers *[]tune.ControllerChoice `json:"controllers"`
	}{&rep.Controllers}); err != nil {
		t.Fatal(err)
	}
	ev := want.Result.Restrict(5, 10)
	if len(rep.Controllers) != 1 || rep.Controllers[0].Eval.SavedPageWindows != ev.Saved || rep.Controllers[0].SwitchesTotal != len(want.Switches) {
		t.Errorf("tune --json controllers %+v, want eval saved %d and %d switches", rep.Controllers, ev.Saved, len(want.Switches))
	}
}

// TestAutoInFleet runs the controller of TestAutoEverywhere in mdk fleet on
// two copies of SPEC section 4's trace: each job's row in curves.csv is
// sim.RunControlled's, and the fleet's row sums both.
func TestAutoInFleet(t *testing.T) {
	const spec = "auto:age,A=0..3,slo=max_pr<=50%,history=4,every=2,margin=0%"
	a, want := exampleAuto(t, spec)
	dir := t.TempDir()
	ex, err := os.ReadFile("../../testdata/example.txt")
	if err != nil {
		t.Fatal(err)
	}
	var jobs []string
	for _, n := range []string{"a.txt", "b.txt"} {
		jobs = append(jobs, filepath.Join(dir, n))
		if err := os.WriteFile(jobs[len(jobs)-1], ex, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	code, stdout, errOut := run(t, "", append([]string{"fleet", "-p", "age:A=0..3", "-p", spec, "--slo", "max_pr<=50%", "-o", out}, jobs...)...)
	if code != 0 {
		t.Fatalf("fleet: exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "controller auto:"+a.Params()+" on every job") {
		t.Errorf("summary has no controller line:\n%s", stdout)
	}
	curves, _ := os.ReadFile(filepath.Join(out, "curves.csv"))
	for _, j := range jobs {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write(append([]string{j}, want.Result.Record(false).CSVRow()...))
		w.Flush()
		if row := b.String(); !strings.Contains(string(curves), "\n"+row) {
			t.Errorf("curves.csv has no row %q:\n%s", row, curves)
		}
	}
	rows, err := csv.NewReader(bytes.NewReader(must(os.ReadFile(filepath.Join(out, "settings.csv"))))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	last := rows[len(rows)-1]
	if last[0] != "auto" || last[1] != a.Params() || last[3] != strconv.FormatInt(2*want.Result.Saved, 10) {
		t.Errorf("settings.csv's last row %q, want auto's with %d saved page-windows", last, 2*want.Result.Saved)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// exampleAuto runs controller spec on SPEC section 4's trace with sim.
func exampleAuto(t *testing.T, spec string) (*tune.Auto, *sim.Controlled) {
	t.Helper()
	tr := testutil.ReadTextTrace(t, "../../testdata/example.txt")
	a, err := tune.ParseAuto(spec, tr.Header.Window)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.RunControlled(context.Background(), tr, a)
	if err != nil {
		t.Fatal(err)
	}
	return a, want
}

// TestAutoInReport: mdk report's Controllers section prints the controller's
// line exactly as mdk mpc prints it for the same policies, and its
// sentence beside OPP and age at the controller's realised max_pr.
func TestAutoInReport(t *testing.T) {
	const path = "../../testdata/example.txt"
	const spec = "auto:age,A=0..3,slo=max_pr<=50%,history=4,every=2,margin=0%"
	code, out, errOut := run(t, "", "mpc", path, "-p", "age:A=0..3", "-p", spec)
	if code != 0 {
		t.Fatalf("mpc: exit %d: %s", code, errOut)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "controller auto:") {
			line = l
		}
	}
	if !strings.Contains(line, "headroom vs opp") {
		t.Fatalf("mpc prints no controller line with a headroom:\n%s", out)
	}
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := run(t, "", "report", path, "-p", "age:A=0..3", "-p", spec, "-o", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	b := html.UnescapeString(string(must(os.ReadFile(page))))
	_, want := exampleAuto(t, spec)
	sentence := fmt.Sprintf("%s saves %.2f%% at max_pr %.4f%%; OPP at %.4f%% saves ", want.Result.Policy+":"+want.Result.Params, 100*want.Result.Savings(), 100*want.Result.MaxPR(), 100*want.Result.MaxPR())
	if !strings.Contains(b, line) || !strings.Contains(b, sentence) || !strings.Contains(b, "; age at its best (A=") {
		t.Errorf("the report's Controllers section lacks mpc's line %q or the sentence %q", line, sentence)
	}
}
