package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func runStatsCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestStatsCmd(t *testing.T) {
	example, err := os.ReadFile("../../testdata/example.txt")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runStatsCLI(t, "", "stats", "../../testdata/example.txt")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// SPEC section 4: L = 51; Σ|A_w| = 3+2+2+2+1+2+1+2+1+2 = 18.
	for _, line := range []string{"windows              10 x 30s\n", "alive page-windows   51\n", "access records       18\n"} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}

	code, out, errs = runStatsCLI(t, string(example), "stats", "-", "--json")
	if code != ExitOK || errs != "" {
		t.Fatalf("--json from stdin: exit %d, stderr %q", code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if m["alive_page_windows"] != 51.0 || m["windows"] != 10.0 || m["lives"] != 6.0 {
		t.Errorf("--json: %v", m)
	}

	// Damage in window 5: the numbers of windows 0..4, then the error.
	lines := strings.SplitAfter(string(example), "\n")
	var bad strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, "5 a") {
			l = "5 a 1 x3\n"
		}
		bad.WriteString(l)
	}
	code, out, errs = runStatsCLI(t, bad.String(), "stats", "-")
	if code != ExitError {
		t.Errorf("damaged trace: exit %d, want %d", code, ExitError)
	}
	if !strings.Contains(out, "windows              5 x 30s\n") || !strings.Contains(out, "alive page-windows   26\n") {
		t.Errorf("damaged trace: stdout does not show the 5-window prefix:\n%s", out)
	}
	if !strings.Contains(errs, `stdin:`) || !strings.Contains(errs, "the numbers above cover the 5 windows before the error") {
		t.Errorf("damaged trace: stderr %q", errs)
	}

	if code, _, _ := runStatsCLI(t, "", "stats"); code != ExitUsage {
		t.Errorf("no argument: exit %d, want %d", code, ExitUsage)
	}
	if code, _, errs := runStatsCLI(t, "", "stats", "no/such/file.txt"); code != ExitError || !strings.Contains(errs, "no/such/file.txt") {
		t.Errorf("missing file: exit %d, stderr %q", code, errs)
	}
}
