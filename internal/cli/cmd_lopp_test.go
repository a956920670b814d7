package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mdk/policy"
)

// TestLOPPTrainValidation: lopp train fits on the first three quarters of
// the training half (windows 0..44 of 120), leaves the censored touches out
// and reports the theta chosen on the validation windows 45..59.
func TestLOPPTrainValidation(t *testing.T) {
	d := t.TempDir()
	tr := filepath.Join(d, "scan.mdkt")
	run := func(args ...string) string { t.Helper(); return runOK(t, args...) }
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

// TestLOPPTrainRates: with several label rates, lopp train fits one model
// per rate, chooses the rate whose theta saves most on the validation
// windows (by its own printed lines), writes exactly the model that rate
// alone would give, and gives byte-identical files on a second run.
func TestLOPPTrainRates(t *testing.T) {
	d := t.TempDir()
	tr := filepath.Join(d, "scan.mdkt")
	run := func(args ...string) string { t.Helper(); return runOK(t, args...) }
	run("gen", "--model", "scan", "--pages", "2000", "--windows", "120", "-o", tr)
	m1, m2 := filepath.Join(d, "m1.json"), filepath.Join(d, "m2.json")
	out := run("lopp", "train", tr, "--rounds", "5", "--rate", "2%|25%|50%", "-o", m1)
	if again := run("lopp", "train", tr, "--rounds", "5", "--rate", "2%|25%|50%", "-o", m2); again != strings.ReplaceAll(out, m1, m2) {
		t.Errorf("a second run printed something else:\n%s\n---\n%s", out, again)
	}
	b1, err := os.ReadFile(m1)
	if err != nil {
		t.Fatal(err)
	}
	if b2, err := os.ReadFile(m2); err != nil || !bytes.Equal(b1, b2) {
		t.Errorf("two runs wrote different models (%v)", err)
	}
	// Each rate's line, and the choice: the most validation savings
	// (ties: the lower statistic, then the first rate).
	line := regexp.MustCompile(`(?m)^rate (\d+)%: theta chosen on validation windows 45\.\.59 \(not fitted on\): lopp:(theta=[0-9.]+), max_pr ([0-9.]+)%, savings ([0-9.]+)% there`)
	type ch struct {
		rate, params string
		stat, sav    float64
	}
	var found []ch
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		st, _ := strconv.ParseFloat(m[3], 64)
		sv, _ := strconv.ParseFloat(m[4], 64)
		found = append(found, ch{m[1], m[2], st, sv})
	}
	if n := strings.Count(out, "fitted on windows 0..44"); n != 3 {
		t.Fatalf("%d models fitted, want 3:\n%s", n, out)
	}
	if len(found) == 0 {
		if !strings.Contains(out, "no label rate of 3 has a theta meeting max_pr<=2% on both; writing the model of opp:r=2%") {
			t.Fatalf("no rate found a theta, and the output does not say so:\n%s", out)
		}
		return
	}
	best := found[0]
	for _, c := range found[1:] {
		if c.sav > best.sav || c.sav == best.sav && c.stat < best.stat {
			best = c
		}
	}
	want := "label rate chosen on validation windows 45..59: opp:r=" + best.rate + "%, lopp:" + best.params
	if !strings.Contains(out, want) {
		t.Fatalf("want %q in:\n%s", want, out)
	}
	// The file is the chosen rate's model.
	m3 := filepath.Join(d, "m3.json")
	run("lopp", "train", tr, "--rounds", "5", "--rate", best.rate+"%", "--slo", "max_pr<=2%", "-o", m3)
	if b3, err := os.ReadFile(m3); err != nil || !bytes.Equal(b1, b3) {
		t.Errorf("the written model is not the one of --rate %s%% alone (%v)", best.rate, err)
	}
	var out2, errb bytes.Buffer
	if code := Run(context.Background(), []string{"lopp", "train", tr, "--rate", "2%|0.02", "-o", m3}, strings.NewReader(""), &out2, &errb); code != ExitUsage || !strings.Contains(errb.String(), "2% listed twice") {
		t.Errorf("--rate 2%%|0.02: exit %d, %q; want a usage error naming the repeat", code, errb.String())
	}
}

// runOK runs mdk with args and returns its standard output; it fails the
// test unless mdk exits 0.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// TestLOPPTrainRation: --ration adds the ration grid to the thetas, the
// model file stays the one without it, two runs print the same, and mdk tune
// over the same lopp settings chooses what lopp train printed.
func TestLOPPTrainRation(t *testing.T) {
	d := t.TempDir()
	tr := filepath.Join(d, "churn.mdkt")
	run := func(args ...string) string { t.Helper(); return runOK(t, args...) }
	run("gen", "--model", "churn", "--pages", "2000", "--windows", "120", "-o", tr)
	m0, m1, m2 := filepath.Join(d, "m0.json"), filepath.Join(d, "m1.json"), filepath.Join(d, "m2.json")
	run("lopp", "train", tr, "--rounds", "5", "--rate", "50%", "--slo", "max_pr<=2%", "-o", m0)
	out := run("lopp", "train", tr, "--rounds", "5", "--rate", "50%", "--slo", "max_pr<=2%", "--ration", "-o", m1)
	if again := run("lopp", "train", tr, "--rounds", "5", "--rate", "50%", "--slo", "max_pr<=2%", "--ration", "-o", m2); again != strings.ReplaceAll(out, m1, m2) {
		t.Errorf("a second run printed something else:\n%s\n---\n%s", out, again)
	}
	b0, _ := os.ReadFile(m0)
	for _, m := range []string{m1, m2} {
		if b, err := os.ReadFile(m); err != nil || !bytes.Equal(b, b0) {
			t.Errorf("%s is not the model trained without --ration (%v)", m, err)
		}
	}
	ch := regexp.MustCompile(`theta chosen on validation windows 45\.\.59 \(not fitted on\): lopp:(\S+), max_pr .* best of 70 thetas and rations meeting max_pr<=2% on both`).FindStringSubmatch(out)
	if ch == nil {
		t.Fatalf("no choice among 70 thetas and rations in:\n%s", out)
	}
	var qs []string
	for _, s := range policy.RationGrid() {
		qs = append(qs, strings.TrimPrefix(s.Params(), "theta=0,q="))
	}
	tuned := run("tune", tr, "--slo", "max_pr<=2%", "--model", m1, "-p", "lopp", "-p", "lopp:theta=0,q="+strings.Join(qs, "|"), "--json")
	if !strings.Contains(tuned, `"params": "`+ch[1]+`"`) {
		t.Errorf("mdk tune over the same settings did not choose lopp:%s:\n%s", ch[1], tuned)
	}
}

// TestLOPPTrainIdle: --idle writes a 7-feature model, deterministically,
// reports its idle-time rows, and mdk tune with it chooses the theta lopp
// train printed; --idle with --ration is refused.
func TestLOPPTrainIdle(t *testing.T) {
	d := t.TempDir()
	tr := filepath.Join(d, "churn.mdkt")
	run := func(args ...string) string { t.Helper(); return runOK(t, args...) }
	run("gen", "--model", "churn", "--pages", "2000", "--windows", "120", "-o", tr)
	m1, m2 := filepath.Join(d, "m1.json"), filepath.Join(d, "m2.json")
	args := []string{"lopp", "train", tr, "--rounds", "5", "--rate", "50%", "--slo", "max_pr<=2%", "--idle"}
	out := run(append(args, "-o", m1)...)
	if again := run(append(args, "-o", m2)...); again != strings.ReplaceAll(out, m1, m2) {
		t.Errorf("a second run printed something else:\n%s\n---\n%s", out, again)
	}
	b1, _ := os.ReadFile(m1)
	if b2, err := os.ReadFile(m2); err != nil || !bytes.Equal(b1, b2) || !bytes.Contains(b1, []byte(`"num_features": 7`)) {
		t.Errorf("two runs wrote different models, or not a 7-feature one (%v):\n%.200s", err, b1)
	}
	if !regexp.MustCompile(`idle-time rows: \d+ \(ages 0,1,2,3,4,6,8,12,16,24,32,48,64 of the labelled gaps lasting that long\), \d+ labelled reclaim-now`).MatchString(out) {
		t.Errorf("no idle-time rows line:\n%s", out)
	}
	ch := regexp.MustCompile(`theta chosen on validation windows 45\.\.59 \(not fitted on\): lopp:(theta=[0-9.]+),`).FindStringSubmatch(out)
	if ch == nil {
		t.Fatalf("no theta chosen:\n%s", out)
	}
	if tuned := run("tune", tr, "--slo", "max_pr<=2%", "--model", m1, "-p", "lopp", "--json"); !strings.Contains(tuned, `"params": "`+ch[1]+`"`) {
		t.Errorf("mdk tune with the idle-time model did not choose lopp:%s:\n%s", ch[1], tuned)
	}
	var o, e bytes.Buffer
	if code := Run(context.Background(), append(args, "--ration", "-o", m2), strings.NewReader(""), &o, &e); code != ExitUsage {
		t.Errorf("--idle --ration: exit %d, %s", code, e.String())
	}
}
