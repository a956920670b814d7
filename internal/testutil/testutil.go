// Package testutil holds helpers shared by mdk's tests: golden files with
// -update, seeded randomness that logs its seed, and external-tool checks.
package testutil

import (
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Update is set by `go test -update` to rewrite golden files.
var Update = flag.Bool("update", false, "rewrite golden files in testdata/")

// Golden compares got with the file testdata/name, or rewrites the file when
// -update is given.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, d)
	}
}

// Seed returns the seed for a randomized test: $MDK_SEED if set, else def.
// It logs the seed so a failure can be replayed.
func Seed(t testing.TB, def uint64) uint64 {
	t.Helper()
	seed := def
	if s := os.Getenv("MDK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("bad MDK_SEED %q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (set MDK_SEED to replay)", seed)
	return seed
}

// Rand returns a deterministic generator for seed.
func Rand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// RequireTool returns the path of an external program the test needs. When
// it is missing the test is skipped, except under CI (CI=true), where .ci/run
// installs every such tool and a missing one is a failure.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, but .ci/run should have installed it", name)
	}
	t.Skipf("%s not installed: %v", name, err)
	return ""
}
