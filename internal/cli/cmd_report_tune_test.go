package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReportSLO: mdk report --slo puts mdk tune's report, for the same
// trace, policies and split, in the page: as the embedded data (equal to
// mdk tune --json) and as the Tuning section's table.
func TestReportSLO(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	run := func(args ...string) (string, int, string) {
		var o, e bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &o, &e)
		return o.String(), code, e.String()
	}
	for _, tc := range []struct {
		name  string
		extra []string // both commands
	}{
		{"default", []string{"--slo", "max_pr<=50%"}},
		{"policies and windows", []string{"--slo", "mean_pr<=10%", "-p", "age:A=1|2|3", "-p", "opp:r=25%|50%", "--train-windows", "0..3", "--eval-windows", "6..9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, code, e := run(append([]string{"report", example, "-o", out}, tc.extra...)...); code != ExitOK {
				t.Fatalf("report: exit %d, stderr %q", code, e)
			}
			js, code, e := run(append([]string{"tune", example, "--json"}, tc.extra...)...)
			if code != ExitOK {
				t.Fatalf("tune: exit %d, stderr %q", code, e)
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			page := string(raw)
			m := regexp.MustCompile(`(?s)<script id="mdk-data" type="application/json">(.*?)</script>`).FindStringSubmatch(page)
			if m == nil {
				t.Fatal("no embedded data")
			}
			var data struct{ Tune any }
			var want any
			if err := json.Unmarshal([]byte(m[1]), &data); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(js), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, data.Tune); diff != "" {
				t.Errorf("the report's tune data differs from mdk tune --json (-tune +report):\n%s", diff)
			}
			// Every policy's row, with the setting mdk tune --json chose.
			var rep struct {
				Policies []struct{ Policy, Params string }
			}
			if err := json.Unmarshal([]byte(js), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Policies) == 0 {
				t.Fatal("tune reported no policies")
			}
			text := html.UnescapeString(page)
			for _, p := range rep.Policies {
				row := `<tr data-policy="` + p.Policy + `" data-params="` + p.Params + `">`
				if !strings.Contains(text, row) {
					t.Errorf("no tuning row %s", row)
				}
			}
			if !strings.Contains(text, `<section id="tuning">`) || !strings.Contains(text, "SLO "+tc.extra[1]+"; settings chosen on the train part") {
				t.Error("no tuning section naming the SLO")
			}
		})
	}
	// The split named in the page: windows 0..3 trained and 6..9 evaluated
	// in the second case (the last one written).
	raw, _ := os.ReadFile(out)
	for _, s := range []string{"<th>train</th><td>" + example + " windows 0..3 (4 of 10)</td>", "<th>eval</th><td>" + example + " windows 6..9 (4 of 10)</td>"} {
		if !strings.Contains(string(raw), s) {
			t.Errorf("report lacks %q", s)
		}
	}

	// Without --slo: no section.
	if _, code, e := run("report", example, "-o", out); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, e)
	}
	if raw, _ := os.ReadFile(out); strings.Contains(string(raw), `id="tuning"`) {
		t.Error("report without --slo has a tuning section")
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad slo", []string{"--slo", "max_pr<2%"}, ExitUsage, "--slo: bad SLO"},
		{"bad range", []string{"--slo", "max_pr<=2%", "--train-windows", "3..1"}, ExitUsage, "--train-windows: bad window range"},
		{"windows without slo", []string{"--eval-windows", "5..9"}, ExitUsage, "need --slo"},
		{"range past the end", []string{"--slo", "max_pr<=2%", "--train-windows", "0..10"}, ExitError, "go past the end"},
	} {
		_, code, e := run(append([]string{"report", example, "-o", out}, tc.args...)...)
		if code != tc.code || !strings.Contains(e, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, e, tc.code, tc.want)
		}
	}
}
