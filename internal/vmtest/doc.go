// Package vmtest runs tests on real Linux kernels in QEMU guests: the
// kernels mdk records on but the development machines lack (idle page
// tracking, DAMON's virtual-address operations, MGLRU).
//
// Two kernels are known ([Custom], [Stock]); kernel.sh fetches and builds
// them outside the repository, cached by version and configuration (see
// docs/vmtest.md). A test boots a guest whose initramfs holds busybox and the
// static binaries it names, runs a shell command in it and gets the command's
// output and exit status back:
//
//	func TestOnRealKernel(t *testing.T) {
//		kernel := vmtest.Kernel(t, vmtest.Custom) // skips (or fails under CI=true) without QEMU or kernel
//		bin := vmtest.BuildTest(t, "mdk/collect")  // static test binary of a package
//		vmtest.RunTest(t, vmtest.GuestTest{Kernel: kernel, Binary: bin, Run: "^TestGuest"})
//	}
//
// Inside the guest the test binary runs with MDK_VMTEST_GUEST set to the
// kernel's name; guest-side tests start with [InGuest] (or [RequireGuest]) so
// that on the host they skip. Lower level: [Guest] with [Guest.Run] boots a
// guest with any files and command and returns a [Result].
//
// Guests run under TCG (software emulation, -accel tcg,thread=single): the
// machines have no usable KVM. Every guest has a hard timeout.
package vmtest
