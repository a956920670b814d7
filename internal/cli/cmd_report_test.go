package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCmd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	svg := filepath.Join(dir, "fig")
	var o, e bytes.Buffer
	args := []string{"report", "../../testdata/example.txt", "-p", "age:A=1|2|3", "-p", "opp:r=25%|50%", "--target", "50%", "-o", out, "--svg", svg}
	if code := Run(context.Background(), args, strings.NewReader(""), &o, &e); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, e.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile("../../testdata/example.txt")
	sum := sha256.Sum256(raw)
	// SPEC section 4: age:A=1 saves 24 of L = 51 page-windows and is the
	// best age at max_pr <= 50%.
	for _, want := range []string{hex.EncodeToString(sum[:]), html.EscapeString("--policy 'age:A=1|2|3' --policy 'opp:r=25%|50%' --svg "), "--target 50% ../../testdata/example.txt",
		`<td data-v="24">24</td><td data-v="51">51</td>`, `data-policy="age" data-params="A=1"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// mpc.svg, a pr and a pages figure per policy, working set, gaps.
	figs, _ := filepath.Glob(filepath.Join(svg, "*.svg"))
	if len(figs) != 1+2*2+2 {
		t.Errorf("--svg wrote %d figures: %q", len(figs), figs)
	}

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no output", []string{"report", "../../testdata/example.txt"}},
		{"stdin", []string{"report", "-", "-o", out}},
		{"bad stat", []string{"report", "../../testdata/example.txt", "--x", "p50_pr", "-o", out}},
		{"bad target", []string{"report", "../../testdata/example.txt", "--target", "2x", "-o", out}},
	} {
		var o, e bytes.Buffer
		if code := Run(context.Background(), tc.args, strings.NewReader(""), &o, &e); code != ExitUsage {
			t.Errorf("%s: exit %d, want %d (stderr %q)", tc.name, code, ExitUsage, e.String())
		}
	}
	var e2 bytes.Buffer
	if code := Run(context.Background(), []string{"report", filepath.Join(dir, "missing.mdkt"), "-o", out}, strings.NewReader(""), &o, &e2); code != ExitError || !strings.Contains(e2.String(), "missing.mdkt") {
		t.Errorf("missing trace: exit %d, stderr %q", code, e2.String())
	}
}
