package vmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Guest describes one boot of a QEMU guest.
type Guest struct {
	Kernel string // kernel image (see [KernelPath])

	// Files are copied into the initramfs: guest path -> host path. Binaries
	// must be statically linked (the guest has no libc); they keep the
	// host file's permission bits.
	Files map[string]string

	// Command is run by busybox sh in /work, after /proc, /sys, /dev, /tmp
	// and the cgroup2 hierarchy (/sys/fs/cgroup) are mounted. Its standard
	// output and error are the Result's Output; its exit status is Exit.
	Command string

	MemoryMiB int           // guest RAM; default 1024
	CPUs      int           // virtual CPUs; default 2
	Timeout   time.Duration // hard limit on the whole boot; default 5 minutes
	Append    string        // extra kernel command line
}

// Result is what came back from a guest.
type Result struct {
	Output  string        // the command's standard output and error (second serial port)
	Console string        // the kernel's console (first serial port)
	Exit    int           // the command's exit status
	Wall    time.Duration // boot to power-off, all boots
	Boots   int           // 1, or more when a kernel died before /init and was booted again
}

// exitMarker ends the command's output: the init script writes it with the
// command's exit status.
const exitMarker = "MDK-VMTEST-EXIT "

const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
[ -e /sys/kernel/debug ] && mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo "mdk-vmtest: kernel $(uname -r)" >/dev/console
cd /work
sh /work/.command >/dev/ttyS1 2>&1 </dev/null
echo "` + exitMarker + `$?" >/dev/ttyS1
sync
reboot -f
`

// Run boots the guest, runs the command and returns its result. The error
// is non-nil when the guest did not report an exit status: QEMU failed, the
// kernel panicked or the timeout passed (the error holds the console's last
// lines). A command that fails is not an error: see Result.Exit.
func (g Guest) Run(ctx context.Context) (*Result, error) {
	if g.Kernel == "" {
		return nil, errors.New("vmtest: Guest.Kernel is empty")
	}
	if g.MemoryMiB == 0 {
		g.MemoryMiB = 1024
	}
	if g.CPUs == 0 {
		g.CPUs = 2
	}
	if g.Timeout == 0 {
		g.Timeout = 5 * time.Minute
	}
	bb, err := busybox()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mdk-vmtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	fs := newInitramfs()
	for _, d := range []string{"/bin", "/proc", "/sys", "/dev", "/tmp", "/work", "/root"} {
		fs.mkdirAll(d)
	}
	fs.addFile("/bin/busybox", fileSrc{host: bb, mode: 0o755})
	fs.addFile("/init", fileSrc{data: []byte(initScript), mode: 0o755})
	fs.addFile("/work/.command", fileSrc{data: []byte(g.Command + "\n"), mode: 0o644})
	guests := make([]string, 0, len(g.Files))
	for guest := range g.Files {
		guests = append(guests, guest)
	}
	sort.Strings(guests)
	for _, guest := range guests {
		host := g.Files[guest]
		st, err := os.Stat(host)
		if err != nil {
			return nil, fmt.Errorf("vmtest: file for %s: %w", guest, err)
		}
		fs.addFile(guest, fileSrc{host: host, mode: uint32(st.Mode().Perm())})
	}
	initrd := filepath.Join(dir, "initrd.gz")
	f, err := os.Create(initrd)
	if err != nil {
		return nil, err
	}
	if err := fs.write(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("vmtest: initramfs: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}

	console, output := filepath.Join(dir, "console"), filepath.Join(dir, "output")
	ctx, cancel := context.WithTimeout(ctx, g.Timeout)
	defer cancel()
	// no_timer_check: under TCG on a loaded host the emulated timer
	// interrupt can miss the kernel's early IO-APIC check, which then
	// panics ("IO-APIC + timer doesn't work!"; seen with the stock kernel).
	cmdline := "console=ttyS0 rdinit=/init panic=-1 oops=panic loglevel=4 no_timer_check"
	if khz := hostTSCkHz(); khz > 0 {
		// Under TCG the guest's TSC is the host's (QEMU reads the host's
		// counter), but a kernel without HPET and ACPI (the custom one)
		// cannot calibrate it and falls back to jiffies, which run fast or
		// slow with the host's load: windows of "1s" were 0.25 s. Giving
		// the frequency and trusting the TSC keeps the guest's clock true.
		cmdline += fmt.Sprintf(" tsc_early_khz=%d tsc=reliable", khz)
	}
	if g.Append != "" {
		cmdline += " " + g.Append
	}
	args := []string{
		"-accel", "tcg,thread=single", "-cpu", "max",
		"-smp", strconv.Itoa(g.CPUs), "-m", strconv.Itoa(g.MemoryMiB),
		"-nodefaults", "-display", "none", "-no-reboot",
		"-serial", "file:" + console, "-serial", "file:" + output,
		"-kernel", g.Kernel, "-initrd", initrd, "-append", cmdline,
	}
	t0 := time.Now()
	var res *Result
	var out string
	for attempt := 1; ; attempt++ {
		os.Remove(console)
		os.Remove(output)
		cmd := exec.CommandContext(ctx, QEMU, args...)
		var qemuOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &qemuOut, &qemuOut
		cmd.WaitDelay = 5 * time.Second
		runErr := cmd.Run()
		res = &Result{Wall: time.Since(t0), Boots: attempt}
		cb, _ := os.ReadFile(console)
		ob, _ := os.ReadFile(output)
		res.Console = string(cb)
		out = strings.ReplaceAll(string(ob), "\r\n", "\n")
		if strings.Contains(out, exitMarker) {
			break
		}
		// A kernel that died before /init started (an emulation hiccup at
		// boot) is booted again, twice at most; anything later is the test's.
		if attempt < 3 && ctx.Err() == nil && !strings.Contains(res.Console, "mdk-vmtest: kernel") {
			continue
		}
		why := "the guest ended without reporting an exit status"
		switch {
		case ctx.Err() != nil:
			why = fmt.Sprintf("the guest did not finish within %v", g.Timeout)
		case runErr != nil:
			why = fmt.Sprintf("%s: %v: %s", QEMU, runErr, strings.TrimSpace(qemuOut.String()))
		}
		res.Output = out
		return res, fmt.Errorf("vmtest: %s (boot %d); console ends:\n%s", why, attempt, tail(res.Console, 25))
	}
	i := strings.LastIndex(out, exitMarker)
	res.Output = out[:i]
	fmt.Sscanf(out[i+len(exitMarker):], "%d", &res.Exit)
	return res, nil
}

// hostTSCkHz returns the host's TSC frequency in kHz ("cpu MHz" of
// /proc/cpuinfo where the TSC is constant), or 0 if unknown.
func hostTSCkHz() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	cpu, _, _ := strings.Cut(string(b), "\n\n") // the first CPU
	var mhz float64
	constant := false
	for _, line := range strings.Split(cpu, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "cpu MHz":
			mhz, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		case "flags":
			constant = slices.Contains(strings.Fields(v), "constant_tsc")
		}
	}
	if !constant || mhz <= 0 {
		return 0
	}
	return int(mhz*1000 + 0.5)
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var kernelVersion = regexp.MustCompile(`mdk-vmtest: kernel (\S+)`)

// KernelVersion returns the version the guest's kernel printed at boot.
func (r *Result) KernelVersion() string {
	if m := kernelVersion.FindStringSubmatch(r.Console); m != nil {
		return m[1]
	}
	return ""
}
