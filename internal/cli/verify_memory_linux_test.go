package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestVerifyMemoryBounded runs mdk verify with every default grid on a
// small mix trace (3,000 pages, 120 windows) in a subprocess and bounds its
// peak RSS. verify used to keep every reclaimed gap of every setting: 278 MB
// on this trace (and 16.5 GB on the README's), where running the settings
// side by side (sim.RunAll) needs about 40 MB. The bound is 3 times that,
// far below the old figure, so the test says which of the two it ran.
func TestVerifyMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mdk verify over 1061 settings")
	}
	if raceEnabled {
		t.Skip("the race detector multiplies memory use")
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "mix.mdkt")
	var stderr strings.Builder
	if code := Run(t.Context(), []string{"gen", "--model", "mix", "--seed", "7", "--pages", "3000", "--windows", "120", "-o", tr}, nil, &strings.Builder{}, &stderr); code != ExitOK {
		t.Fatalf("gen: exit %d: %s", code, stderr.String())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMDK$")
	cmd.Env = append(os.Environ(), "MDK_HELPER_ARGS=verify\n"+tr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mdk verify: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "generator equals simulator on every setting") {
		t.Fatalf("mdk verify printed no verdict:\n%s", out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	const limitKB = 120 << 10
	if ru.Maxrss > limitKB {
		t.Errorf("mdk verify peaked at %d MB of RSS on a 3,000-page trace; want at most %d MB (memory must not hold every setting's history)", ru.Maxrss>>10, limitKB>>10)
	}
	t.Logf("mdk verify: peak RSS %d MB", ru.Maxrss>>10)
}
