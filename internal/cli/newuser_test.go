package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewUserMessages checks the small things a new user trips over
// (issue 16): each command must exit with the right code and say what is
// wrong in words that fit the command.
func TestNewUserMessages(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args    []string
		code    int
		want    string
		mustNot string
	}{
		{args: []string{"--version"}, code: 0, want: "mdk " + Version},
		{args: []string{"record", "-o", filepath.Join(dir, "r.bin"), "--pid", "1"}, code: ExitUsage, want: "name the file .mdkt (binary) or .txt (text)", mustNot: "--format"},
		{args: []string{"stats", dir}, code: ExitError, want: "is a directory, not a trace file"},
		{args: []string{"record", "--pid", "-1", "-o", filepath.Join(dir, "r.mdkt")}, code: ExitUsage, want: "--pid -1: a process ID is a positive number"},
		{args: []string{"sim", example, "age:A=1..5/-1"}, code: ExitUsage, want: "step must be positive"},
		{args: []string{"convert", example, filepath.Join(dir, "x.bin")}, code: ExitUsage, want: "use --format"},
	}
	for _, tc := range cases {
		code, out, errs := run(t, "", tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) || (tc.mustNot != "" && strings.Contains(errs, tc.mustNot)) {
			t.Errorf("mdk %s: exit %d, stdout %q, stderr %q; want exit %d saying %q", strings.Join(tc.args, " "), code, out, errs, tc.code, tc.want)
		}
	}
}

// TestInterruptedSaysSo checks that a cancelled command says "interrupted"
// and exits 130, not "context canceled".
func TestInterruptedSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	code := Run(ctx, []string{"mpc", example, "-p", "age"}, strings.NewReader(""), &out, &errb)
	if code != ExitInterrupt || errb.String() != "mdk: interrupted\n" {
		t.Errorf("exit %d, stderr %q; want 130 and \"mdk: interrupted\"", code, errb.String())
	}
}

// TestDemoIgnored checks that the demo's default output directory is
// ignored by git, so that mdk demo in a checkout leaves it clean.
func TestDemoIgnored(t *testing.T) {
	b, err := os.ReadFile("../../.gitignore")
	if err != nil || !strings.Contains(string(b), "/mdk-demo/") {
		t.Errorf(".gitignore (%v) does not ignore /mdk-demo/", err)
	}
}
