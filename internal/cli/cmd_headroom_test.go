package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHeadroomCmd: by default the reference is OPP at the setting's own
// max_pr (age:A=1 on SPEC section 4's trace: 0.5), and every gap age:A=1
// reclaims OPP reclaims one window earlier (SPEC section 4: 24 vs 32).
func TestHeadroomCmd(t *testing.T) {
	code, out, errs := run(t, "", "headroom", example, "-p", "age:A=1")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"reference  opp:r=50%          saved 32 of 51 page-windows (62.75%), 4 promotions",
		"headroom   +15.69 pts (8 page-windows)",
		"both, setting later      8     24             32         4                   4               +15.69 pts",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errs = run(t, "", "headroom", example, "-p", "age:A=1", "--vs", "pace:P=3,A=2", "--json")
	if code != ExitOK || errs != "" {
		t.Fatalf("--json: exit %d, stderr %q", code, errs)
	}
	var j struct {
		Headroom int64 `json:"headroom_page_windows"`
		Classes  map[string]struct {
			Saved [2]int64 `json:"saved_page_windows"`
		} `json:"classes"`
		Splits map[string][]json.RawMessage `json:"splits"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	var saved [2]int64
	for _, c := range j.Classes {
		saved[0] += c.Saved[0]
		saved[1] += c.Saved[1]
	}
	// SPEC section 4: age:A=1 saves 24, pace:P=3,A=2 30.
	if j.Headroom != 6 || saved != [2]int64{24, 30} || len(j.Classes) != 6 || len(j.Splits) != 7 {
		t.Errorf("json: headroom %d, classes save %v, %d classes, %d splits", j.Headroom, saved, len(j.Classes), len(j.Splits))
	}
	for _, tc := range []struct{ args, want string }{
		{"headroom " + example, "needs -p"},
		{"headroom " + example + " -p age", "want one setting"},
		{"headroom " + example + " -p age:A=1 --vs opp", "want one setting"},
		{"headroom " + example + " -p age:A=1 --x p50", `--x "p50"`},
		{"headroom " + example + " -p nope:A=1", "--policy"},
	} {
		code, _, errs := run(t, "", strings.Fields(tc.args)...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, ExitUsage, tc.want)
		}
	}
	code, _, errs = run(t, "", "headroom", "nonexistent.mdkt", "-p", "age:A=1")
	if code != ExitError || !strings.Contains(errs, "nonexistent.mdkt") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
}
