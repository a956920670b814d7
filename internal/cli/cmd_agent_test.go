package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdk/agent"
)

// TestAgentUsage checks the agent's command-line errors and that it refuses
// to start without swap, with a one-line error.
func TestAgentUsage(t *testing.T) {
	dir := t.TempDir()
	proc := filepath.Join(dir, "proc")
	os.MkdirAll(proc, 0o755)
	os.WriteFile(filepath.Join(proc, "swaps"), []byte("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no target", []string{"agent", "--policy", "age:A=1", "-o", dir}, ExitUsage, "give one of --pid"},
		{"two targets", []string{"agent", "--pid", "1", "--replay", "x", "--policy", "age:A=1", "-o", dir}, ExitUsage, "give one of --pid"},
		{"no output", []string{"agent", "--pid", "1", "--policy", "age:A=1"}, ExitUsage, "needs -o RUN"},
		{"no policy", []string{"agent", "--pid", "1", "-o", dir}, ExitUsage, "needs --policy"},
		{"grid", []string{"agent", "--pid", "1", "--policy", "age:A=1|2", "--window", "1s", "-o", dir}, ExitUsage, "is 2 settings"},
		{"bad window", []string{"agent", "--pid", "1", "--policy", "age:A=1", "--window", "0s", "-o", dir}, ExitUsage, "--window must be positive"},
		{"no swap", []string{"agent", "--proc", proc, "--pid", "1", "--policy", "age:A=1", "--window", "1s", "-o", dir}, ExitError, "no swap device is active"},
		{"compare no run", []string{"agent", "compare", filepath.Join(dir, "none")}, ExitError, "run.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, stderr, tc.code, tc.msg)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("error is %d lines, want one: %q", n+1, stderr)
			}
		})
	}
}

// compareJSON is the part of `mdk agent compare --format json` the tests read.
type compareJSON struct {
	Setting   string             `json:"setting"`
	Predicted map[string]float64 `json:"predicted"`
	Measured  map[string]float64 `json:"measured"`
	TotalRaw  map[string]int64   `json:"total"`
	Memory    agent.Memory       `json:"memory"`
}

func readCompare(t *testing.T, stdout string) compareJSON {
	t.Helper()
	var c compareJSON
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("compare --format json: %v\n%s", err, stdout)
	}
	return c
}
