package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdk/internal/testutil"
)

// TestConvertPageSizeSameIsIdentical: --page-size 4K of a 4K binary trace
// (and --window-factor 1) writes the input byte for byte.
func TestConvertPageSizeSameIsIdentical(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.mdkt"), filepath.Join(dir, "out.mdkt")
	if code, _, errs := run(t, "", "gen", "--model", "churn", "--pages", "500", "--windows", "20", "-o", in); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{{"--page-size", "4K"}, {"--page-size", "4096", "--window-factor", "1"}, {"--page-size", "4KiB"}} {
		if code, _, errs := run(t, "", append([]string{"convert", in, out}, args...)...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
		a, _ := os.ReadFile(in)
		b, _ := os.ReadFile(out)
		if !bytes.Equal(a, b) {
			t.Errorf("%v: output differs from the input (%d and %d bytes)", args, len(a), len(b))
		}
	}
}

// TestConvertWhatIfs: the header of a coarsened trace, and the refusals.
func TestConvertWhatIfs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	if code, _, errs := run(t, "", "convert", example, out, "--page-size", "8K", "--window-factor", "3"); code != 0 {
		t.Fatal(errs)
	}
	tr := testutil.ReadTextTrace(t, out)
	if tr.Header.PageSize != 8192 || tr.Header.Window.String() != "1m30s" || len(tr.Windows) != 4 {
		t.Errorf("header %+v, %d windows; want 8192 bytes, 1m30s, 4 windows", tr.Header, len(tr.Windows))
	}
	for _, tc := range []struct{ args, want string }{
		{"--page-size 6K", "not a multiple"},
		{"--page-size 2X", "--page-size"},
		{"--page-size 0", "--page-size"},
		{"--window-factor 0", "--window-factor 0"},
	} {
		code, _, errs := run(t, "", append([]string{"convert", example, out}, strings.Fields(tc.args)...)...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q", tc.args, code, errs)
		}
	}
}

// TestDiffCmd: a trace against itself has Jaccard 1 everywhere and the same
// curves; against its own 2-window merge it is refused until both are
// merged.
func TestDiffCmd(t *testing.T) {
	dir := t.TempDir()
	x2 := filepath.Join(dir, "x2.txt")
	copyEx := filepath.Join(dir, "copy.mdkt")
	if code, _, errs := run(t, "", "convert", example, copyEx); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := run(t, "", "diff", example, copyEx, "-p", "age:A=1|2", "-p", "opp:r=50%", "--target", "50%", "--per-window")
	if code != 0 {
		t.Fatal(errs)
	}
	for _, want := range []string{
		"windows     A 10, B 10\n",
		"accessed    A 18, B 18, both 18 page-windows\n",
		"jaccard     mean 1.0000, min 1.0000, overall 1.0000\n",
		"  window 9  1.0000\n",
		"age     50%            A=1        47.06%     A=1        47.06%     +0.00 pts",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs := run(t, "", "convert", example, x2, "--window-factor", "2"); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := run(t, "", "diff", example, x2); code != ExitError || !strings.Contains(errs, "window lengths differ") {
		t.Errorf("30s vs 1m: exit %d, stderr %q", code, errs)
	}
	code, out, errs = run(t, "", "diff", example, x2, "--json", "-p", "age:A=1")
	if code != ExitError {
		t.Errorf("--json 30s vs 1m: exit %d, %s %s", code, out, errs)
	}
	code, out, errs = run(t, "", "diff", x2, x2, "--json", "-p", "age:A=1")
	if code != ExitUsage {
		t.Errorf("same file: exit %d, %s", code, errs)
	}
	// SPEC section 4's trace, windows merged in pairs: |A| = 4 (pages 1 2 3 5), 3, 2, 2, 2.
	x2b := filepath.Join(dir, "x2b.mdkt")
	run(t, "", "convert", x2, x2b)
	code, out, errs = run(t, "", "diff", x2, x2b, "--json", "-p", "age:A=1")
	if code != 0 {
		t.Fatal(errs)
	}
	var j struct {
		Jaccard  []float64 `json:"jaccard"`
		Accessed [2]int64  `json:"accessed"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Jaccard) != 5 || j.Accessed[0] != j.Accessed[1] || j.Accessed[0] != 4+3+2+2+2 {
		t.Errorf("json %+v", j)
	}
}
