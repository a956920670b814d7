package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelperMDK is not a test: run as a subprocess with MDK_HELPER_ARGS
// set, it is mdk with those arguments (one per line).
func TestHelperMDK(t *testing.T) {
	args := os.Getenv("MDK_HELPER_ARGS")
	if args == "" {
		return // not a helper process
	}
	os.Exit(Run(context.Background(), strings.Split(args, "\n"), os.Stdin, os.Stdout, os.Stderr))
}

// TestBoundedMemory runs inputs whose header or window numbers claim far
// more than their bytes, and a generator size beyond memory, in a
// subprocess limited to 3 GB of address space (ulimit -v), and expects a
// clean one-line error from each instead of the Go runtime's out-of-memory
// crash.
func TestBoundedMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory does not fit under ulimit -v")
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := write("huge.txt", "mdk-trace 1\nwindows 2147483647\n0 a 1 2\n3 a 1\n")
	far := write("far.txt", "mdk-trace 1\n0 a 1 2\n2147483646 a 1\n")
	many := write("many.txt", "mdk-trace 1\nwindows 16000000\n0 a 1 2\n3 a 1\n")
	farMany := write("far-many.txt", "mdk-trace 1\n0 a 1 2\n16000000 a 1\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"stats", huge}, "more than the limit of 16777216 windows (--max-windows raises it)"},
		{[]string{"mpc", huge}, "more than the limit of 16777216 windows (--max-windows raises it)"},
		{[]string{"stats", far}, "beyond the limit of 16777216 windows (--max-windows raises it)"},
		{[]string{"mpc", far, "-p", "age"}, "beyond the limit of 16777216 windows (--max-windows raises it)"},
		{[]string{"mpc", many, "-p", "age:A=1"}, "need about 5.7 GiB for their per-window tables"},
		{[]string{"mpc", farMany}, "for their per-window tables"},
		{[]string{"gen", "--pages", "2147483648", "-o", filepath.Join(dir, "g.mdkt")}, "gen: --pages 2147483648 needs about"},
		{[]string{"gen", "--pages", "100000000", "-o", filepath.Join(dir, "g.mdkt")}, "gen: --pages 100000000 needs about"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args[:1], " ")+" "+filepath.Base(tc.args[1]), func(t *testing.T) {
			cmd := exec.Command("/bin/sh", "-c", `ulimit -v 3000000 && exec "$0" -test.run='^TestHelperMDK$'`, os.Args[0])
			cmd.Env = append(os.Environ(), "MDK_HELPER_ARGS="+strings.Join(tc.args, "\n"), "GOMEMLIMIT=off")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			msg := stderr.String()
			if code != ExitError || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "mdk: ") || !strings.Contains(msg, tc.want) {
				t.Errorf("mdk %s: exit %d (%v), stderr:\n%.600s\nwant exit 1 and one line saying %q", strings.Join(tc.args, " "), code, err, msg, tc.want)
			}
		})
	}
}
