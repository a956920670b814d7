package vmtest

import (
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// KernelKind names one of the guest kernels.
type KernelKind string

const (
	// Custom is Debian 13's linux-source-6.12 built with make tinyconfig and
	// kernel.config: idle page tracking, DAMON (vaddr, paddr, sysfs), MGLRU,
	// memcg, swap, zram, zswap, userfaultfd, THP (madvise).
	Custom KernelKind = "custom"
	// Stock is Debian 13's stock amd64 kernel image (linux-image-6.12.*-amd64):
	// DAMON and MGLRU, no idle page tracking, zram as a module.
	Stock KernelKind = "stock"
)

//go:embed kernel.config
var kernelConfig []byte

// ConfigHash is the part of the custom kernel's cache key that comes from
// kernel.config: the first 12 hex digits of its SHA-256.
func ConfigHash() string {
	sum := sha256.Sum256(kernelConfig)
	return hex.EncodeToString(sum[:])[:12]
}

// CacheDir is where kernel.sh keeps the kernels: $MDK_VMTEST_CACHE, or
// /var/cache/mdk-vmtest.
func CacheDir() string {
	if d := os.Getenv("MDK_VMTEST_CACHE"); d != "" {
		return d
	}
	return "/var/cache/mdk-vmtest"
}

// KernelPath returns the cached kernel image of kind, or an error that says
// how to get it. $MDK_VMTEST_KERNEL_CUSTOM / $MDK_VMTEST_KERNEL_STOCK name an
// image directly. Of several cached custom kernels with the current
// kernel.config (different source versions), the newest is used.
func KernelPath(kind KernelKind) (string, error) {
	if p := os.Getenv("MDK_VMTEST_KERNEL_" + strings.ToUpper(string(kind))); p != "" {
		return p, nil
	}
	var pattern, image string
	switch kind {
	case Custom:
		pattern, image = "custom-*-"+ConfigHash(), "bzImage"
	case Stock:
		pattern, image = "stock-*", "vmlinuz"
	default:
		return "", fmt.Errorf("vmtest: unknown kernel %q", kind)
	}
	dirs, _ := filepath.Glob(filepath.Join(CacheDir(), pattern))
	var found []string
	for _, d := range dirs {
		if st, err := os.Stat(filepath.Join(d, image)); err == nil && st.Size() > 0 {
			found = append(found, filepath.Join(d, image))
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("vmtest: no %s kernel in %s (for kernel.config %s): run `bash internal/vmtest/kernel.sh %s` (the custom kernel builds in about 8 minutes on 2 cores)",
			kind, CacheDir(), ConfigHash(), kind)
	}
	sort.Slice(found, func(i, j int) bool { return modTime(found[i]) > modTime(found[j]) })
	return found[0], nil
}

func modTime(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.ModTime().UnixNano()
}

// QEMU is the emulator the guests run on.
const QEMU = "qemu-system-x86_64"

// Available reports whether guests of kind can run here: QEMU and busybox
// are installed and the kernel is cached. The error says what is missing.
func Available(kind KernelKind) (string, error) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "", errors.New("vmtest: guests need linux/amd64")
	}
	if _, err := exec.LookPath(QEMU); err != nil {
		return "", fmt.Errorf("vmtest: %s not found (Debian package qemu-system-x86)", QEMU)
	}
	if _, err := busybox(); err != nil {
		return "", err
	}
	return KernelPath(kind)
}

// Kernel returns the image of kind for a host-side test. Where the guest
// cannot run it skips the test with the reason, except under CI=true, where
// guests must run and it fails the test.
func Kernel(t testing.TB, kind KernelKind) string {
	t.Helper()
	if _, in := InGuest(); in {
		t.Skip("vmtest: already in a guest")
	}
	if testing.Short() {
		t.Skip("vmtest: guest tests are not run with -short")
	}
	p, err := Available(kind)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: guest tests must run)", err)
		}
		t.Skip(err)
	}
	return p
}

// busybox finds a statically linked busybox (Debian package busybox-static).
func busybox() (string, error) {
	for _, p := range []string{os.Getenv("MDK_VMTEST_BUSYBOX"), "/bin/busybox", "/usr/bin/busybox"} {
		if p == "" {
			continue
		}
		if isStatic(p) {
			return p, nil
		}
	}
	return "", errors.New("vmtest: no statically linked busybox (Debian package busybox-static)")
}

// isStatic reports whether the ELF file at path has no program interpreter.
func isStatic(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}
