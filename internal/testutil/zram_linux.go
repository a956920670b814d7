//go:build linux

package testutil

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"mdk/linux"
)

// SetupZram creates a zram swap device of size bytes for the test and
// removes it when the test ends (swapoff, then hot_remove), on every path.
// It touches no swap it did not create: it takes a new device from
// /sys/class/zram-control/hot_add (loading the zram module with no devices
// if needed). It skips when not root; under CI=true a failure to set up is
// a test failure, since CI runs as root. Tests that call it run one at a
// time on the machine (a lock file in the temporary directory). In a vmtest
// guest, too, a failure to set up fails the test.
func SetupZram(t testing.TB, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: sets up a zram swap device")
	}
	fail := t.Skipf
	if os.Getenv("CI") == "true" || os.Getenv("MDK_VMTEST_GUEST") != "" {
		fail = t.Fatalf
	}
	// One zram test at a time on the machine, across test processes: the
	// kernel spreads swap over devices of equal priority and fills a higher
	// one first, so another test's swapoff would swap this test's pages
	// back in.
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "mdk-zram-test.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		fail("zram test lock: %v", err)
	}
	// A kernel without file locking (a vmtest guest's) runs one test alone.
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil && !errors.Is(err, syscall.ENOSYS) {
		lock.Close()
		fail("zram test lock: %v", err)
	}
	t.Cleanup(func() { lock.Close() }) // runs last: after swapoff and hot_remove
	kernel := linux.Default()
	if _, err := os.Stat(kernel.ZramControl()); errors.Is(err, os.ErrNotExist) {
		if out, err := exec.Command("modprobe", "zram", "num_devices=0").CombinedOutput(); err != nil {
			fail("no zram: modprobe zram: %v: %s", err, out)
		}
	}
	n, err := kernel.ZramHotAdd()
	if err != nil {
		fail("zram hot_add: %v", err)
	}
	dev := fmt.Sprintf("/dev/zram%d", n)
	t.Cleanup(func() {
		if err := kernel.ZramHotRemove(n); err != nil {
			t.Errorf("zram hot_remove %d: %v", n, err)
		}
	})
	if err := kernel.ZramSetDisksize(n, size); err != nil {
		fail("zram%d disksize: %v", n, err)
	}
	if out, err := exec.Command("mkswap", dev).CombinedOutput(); err != nil {
		fail("mkswap %s: %v: %s", dev, err, out)
	}
	// The highest priority, so that MADV_PAGEOUT writes to this device even
	// where the machine has swap of its own (swapon(2) directly: busybox's
	// swapon has no -p).
	if err := swapctl(syscall.SYS_SWAPON, dev, swapFlagPrefer|32767); err != nil {
		fail("swapon %s: %v", dev, err)
	}
	t.Cleanup(func() {
		if err := swapctl(syscall.SYS_SWAPOFF, dev, 0); err != nil {
			t.Errorf("swapoff %s: %v", dev, err)
		}
	})
	t.Logf("swap on %s (%d MiB)", dev, size>>20)
	return dev
}

// swapFlagPrefer is SWAP_FLAG_PREFER of <sys/swap.h>: the low 15 bits are
// the priority.
const swapFlagPrefer = 0x8000

// swapctl calls swapon(2) or swapoff(2) on path.
func swapctl(nr uintptr, path string, flags int) error {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return err
	}
	if _, _, e := syscall.Syscall(nr, uintptr(unsafe.Pointer(p)), uintptr(flags), 0); e != 0 {
		return e
	}
	return nil
}
