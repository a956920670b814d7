package vmtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// GuestEnv is set, inside a guest started by [RunTest], to the kernel's kind
// ("custom", "stock").
const GuestEnv = "MDK_VMTEST_GUEST"

// InGuest returns the kind of kernel this process runs on, if it runs in a
// guest started by [RunTest].
func InGuest() (KernelKind, bool) {
	k := os.Getenv(GuestEnv)
	return KernelKind(k), k != ""
}

// RequireGuest skips a guest-side test on the host and returns the kernel
// kind it runs on.
func RequireGuest(t testing.TB) KernelKind {
	t.Helper()
	k, ok := InGuest()
	if !ok {
		t.Skip("runs only inside a vmtest guest (a host-side test boots it)")
	}
	return k
}

// BuildGo builds the main package pkg (an import path such as "mdk/cmd/mdk")
// as a static binary for the guest and returns its path in a temporary
// directory of t.
func BuildGo(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	goTool(t, "build", "-o", out, pkg)
	return out
}

// BuildTest builds the test binary of package pkg as a static binary for
// the guest and returns its path.
func BuildTest(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg)+".test")
	goTool(t, "test", "-c", "-o", out, pkg)
	return out
}

func goTool(t testing.TB, args ...string) {
	t.Helper()
	gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// GuestTest is a Go test binary run in a guest.
type GuestTest struct {
	Kernel  string            // kernel image, from [Kernel]
	Kind    KernelKind        // its kind, passed to the guest as $MDK_VMTEST_GUEST; default Custom
	Binary  string            // test binary, from [BuildTest]
	Run     string            // -test.run pattern
	Args    []string          // more test flags
	Files   map[string]string // more files: guest path -> host path
	Env     map[string]string // environment of the test binary
	Timeout time.Duration     // hard limit of the guest; default 5 minutes
	CPUs    int
	Memory  int // MiB
}

// RunTest boots a guest that runs the test binary with -test.v and fails t
// if the binary fails or the guest does not finish. The binary's output is
// logged through t; its wall time and the kernel's version too. It returns
// the guest's result for further checks.
func RunTest(t testing.TB, gt GuestTest) *Result {
	t.Helper()
	if gt.Kind == "" {
		gt.Kind = Custom
	}
	files := map[string]string{"/work/test": gt.Binary}
	for k, v := range gt.Files {
		files[k] = v
	}
	var env []string
	env = append(env, GuestEnv+"="+string(gt.Kind), "HOME=/root", "TMPDIR=/tmp", "PATH=/work:/bin")
	keys := make([]string, 0, len(gt.Env))
	for k := range gt.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+shellQuote(gt.Env[k]))
	}
	args := []string{"/work/test", "-test.v", "-test.timeout", "10m"}
	if gt.Run != "" {
		args = append(args, "-test.run", gt.Run)
	}
	args = append(args, gt.Args...)
	for i := range args {
		args[i] = shellQuote(args[i])
	}
	g := Guest{
		Kernel:  gt.Kernel,
		Files:   files,
		Command: "env " + strings.Join(env, " ") + " " + strings.Join(args, " "),
		Timeout: gt.Timeout, CPUs: gt.CPUs, MemoryMiB: gt.Memory,
	}
	res, err := g.Run(context.Background())
	if res != nil && res.Output != "" {
		t.Logf("guest output (%s kernel %s):\n%s", gt.Kind, res.KernelVersion(), res.Output)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest %s (%s) ran in %v (%d boot(s))", gt.Kind, res.KernelVersion(), res.Wall.Round(time.Millisecond), res.Boots)
	if res.Exit != 0 {
		t.Fatalf("the test binary failed in the %s guest (exit status %d); console ends:\n%s", gt.Kind, res.Exit, tail(res.Console, 10))
	}
	if !strings.Contains(res.Output, "\nPASS") && !strings.HasPrefix(res.Output, "PASS") {
		t.Fatalf("the guest's test binary did not print PASS")
	}
	return res
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,^") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
