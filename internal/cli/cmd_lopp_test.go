package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLOPPTrainValidation: lopp train fits on the first three quarters of
// the training half (windows 0..44 of 120), leaves the censored touches out
// and reports the theta chosen on the validation windows 45..59.
func TestLOPPTrainValidation(t *testing.T) {
	d := t.TempDir()
	tr := filepath.Join(d, "scan.mdkt")
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Run(context.Background(), args, strings.NewReader(""), &out, &errb); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	run("gen", "--model", "scan", "--pages", "2000", "--windows", "120", "-o", tr)
	out := run("lopp", "train", tr, "--rounds", "5", "-o", filepath.Join(d, "m.json"))
	for _, re := range []string{
		`fitted on windows 0\.\.44 of .*scan\.mdkt: \d+ touches, \d+ labelled reclaimed by opp:r=2%, [1-9]\d* left out as censored`,
		`(theta chosen on validation windows 45\.\.59 \(not fitted on\): lopp:theta=[0-9.]+, max_pr [0-9.]+%, savings [0-9.]+% there \(training windows 0\.\.59: .*best of 51 thetas meeting max_pr<=2% on both\)|no theta of 51 meets max_pr<=2% on both the training windows 0\.\.59 and their validation windows 45\.\.59)`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
	out = run("lopp", "train", tr, "--rounds", "5", "--train-windows", "10..29", "--slo", "mean_pr<=1%", "-o", filepath.Join(d, "m2.json"))
	if !strings.Contains(out, "fitted on windows 10..24") || !strings.Contains(out, "25..29") || !strings.Contains(out, "mean_pr") {
		t.Errorf("--train-windows 10..29 --slo mean_pr<=1%%: want fit 10..24, validation 25..29:\n%s", out)
	}
}
