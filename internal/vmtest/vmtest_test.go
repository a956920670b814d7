package vmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBoot boots each kernel once and runs this package's guest-side
// tests in it (TestGuest*): the rig works end to end and the kernels have
// the features the other guest tests rely on.
func TestBoot(t *testing.T) {
	for _, kind := range []KernelKind{Custom, Stock} {
		t.Run(string(kind), func(t *testing.T) {
			kernel := Kernel(t, kind)
			bin := BuildTest(t, "mdk/internal/vmtest")
			res := RunTest(t, GuestTest{Kernel: kernel, Kind: kind, Binary: bin, Run: "^TestGuest"})
			if v := res.KernelVersion(); !strings.HasPrefix(v, "6.12.") {
				t.Errorf("guest kernel version %q, want 6.12.*", v)
			}
		})
	}
}

// TestBootFailureIsReported: a failing command's exit status comes back.
func TestBootFailureIsReported(t *testing.T) {
	kernel := Kernel(t, Custom)
	res, err := Guest{Kernel: kernel, Command: "echo hello; cat /proc/sys/kernel/osrelease; exit 3"}.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Exit != 3 || !strings.HasPrefix(res.Output, "hello\n6.12.") {
		t.Fatalf("exit %d, output %q; want 3 and hello, the release", res.Exit, res.Output)
	}
}

// TestInitramfsCpio: the archive is one GNU cpio lists and extracts.
func TestInitramfsCpio(t *testing.T) {
	if _, err := exec.LookPath("cpio"); err != nil {
		t.Skip("cpio not installed")
	}
	fs := newInitramfs()
	fs.addFile("/a/b/c.txt", fileSrc{data: []byte("hello\n"), mode: 0o600})
	fs.addFile("/x", fileSrc{data: []byte("123")})
	fs.links["/a/l"] = "b/c.txt"
	var buf bytes.Buffer
	if err := fs.write(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", "gzip -dc | cpio -idm --quiet")
	cmd.Dir, cmd.Stdin = dir, &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "a/l"))
	if err != nil || string(b) != "hello\n" {
		t.Fatalf("a/l -> %q, %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(dir, "a/b/c.txt")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("a/b/c.txt: %v %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "x")); string(b) != "123" {
		t.Fatalf("x = %q", b)
	}
}

// TestGuestFeatures: what each kernel has.
func TestGuestFeatures(t *testing.T) {
	kind := RequireGuest(t)
	has := func(p string) bool { _, err := os.Stat(p); return err == nil }
	want := map[string]bool{
		"/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds": true,
		"/sys/kernel/mm/lru_gen/enabled":                  true,
		"/proc/self/pagemap":                              true,
		"/sys/fs/cgroup/cgroup.procs":                     true,
		"/sys/kernel/mm/page_idle/bitmap":                 kind == Custom,
	}
	for p, w := range want {
		if has(p) != w {
			t.Errorf("%s kernel: %s exists = %v, want %v", kind, p, !w, w)
		}
	}
}
