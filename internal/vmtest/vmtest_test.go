package vmtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
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

// TestGuestIdleBitmap: of 2,048 pages all marked idle, exactly the touched
// ones read back as accessed, up to the pages the kernel could not mark
// because they were still in a per-CPU LRU batch; after draining those
// batches (a write to /proc/sys/vm/drop_caches) no slack is left.
func TestGuestIdleBitmap(t *testing.T) {
	if kind := RequireGuest(t); kind != Custom {
		t.Skipf("the %s kernel has no idle page tracking", kind)
	}
	const n, touched = 2048, 700
	buf, err := syscall.Mmap(-1, 0, n*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(buf)
	for i := 0; i < n; i++ {
		buf[i*4096] = 1
	}
	for _, drain := range []bool{false, true} {
		if drain {
			if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0); err != nil {
				t.Fatal(err)
			}
		}
		pfns := pfnsOf(t, buf, n)
		setIdle(t, pfns)
		for i := 0; i < touched; i++ {
			buf[i*4096*2] = 2 // every other page of the first 1400
		}
		// Over the frames whose bits the kernel returns (not those of the
		// partial last bitmap word: see collect.TestRecorderPartialLastWord).
		acc, touchedAcc, touchedReadable, unreadable := 0, 0, 0, 0
		for i, idle := range readIdle(t, pfns) {
			isTouched := i%2 == 0 && i < 2*touched
			if idle == nil {
				unreadable++
				continue
			}
			if isTouched {
				touchedReadable++
			}
			if !*idle {
				acc++
				if isTouched {
					touchedAcc++
				}
			}
		}
		t.Logf("drain=%v: %d of %d readable pages read as accessed, %d touched (%d pages in the partial last bitmap word, unreadable)", drain, acc, n-unreadable, touchedReadable, unreadable)
		if touchedAcc != touchedReadable {
			t.Errorf("drain=%v: %d of the %d touched pages read as accessed", drain, touchedAcc, touchedReadable)
		}
		if slack := acc - touchedReadable; slack < 0 || slack > 64 || drain && slack != 0 {
			t.Errorf("drain=%v: %d untouched pages read as accessed", drain, slack)
		}
	}
}

func pfnsOf(t *testing.T, buf []byte, n int) []uint64 {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n*8)
	if _, err := f.ReadAt(b, int64(uintptr(unsafe.Pointer(&buf[0]))/4096*8)); err != nil {
		t.Fatal(err)
	}
	pfns := make([]uint64, n)
	for i := range pfns {
		e := binary.NativeEndian.Uint64(b[i*8:])
		if e>>63 == 0 || e&(1<<55-1) == 0 {
			t.Fatalf("page %d not present with a PFN: %#x", i, e)
		}
		pfns[i] = e & (1<<55 - 1)
	}
	return pfns
}

func setIdle(t *testing.T, pfns []uint64) {
	t.Helper()
	f, err := os.OpenFile("/sys/kernel/mm/page_idle/bitmap", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range pfns {
		var w [8]byte
		binary.NativeEndian.PutUint64(w[:], 1<<(p%64))
		if _, err := f.WriteAt(w[:], int64(p/64*8)); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatal(err) // unexpected EOF: the partial last word, marked all the same
		}
	}
}

// readIdle returns each frame's idle bit, nil where the kernel does not
// return it (the partial last word of the bitmap).
func readIdle(t *testing.T, pfns []uint64) []*bool {
	t.Helper()
	f, err := os.Open("/sys/kernel/mm/page_idle/bitmap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	idle := make([]*bool, len(pfns))
	for i, p := range pfns {
		var w [8]byte
		n, err := f.ReadAt(w[:], int64(p/64*8))
		if n == 0 && errors.Is(err, io.EOF) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		b := binary.NativeEndian.Uint64(w[:])&(1<<(p%64)) != 0
		idle[i] = &b
	}
	return idle
}
