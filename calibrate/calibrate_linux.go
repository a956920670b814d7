//go:build linux

package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"mdk/linux"
	"mdk/tier"
)

// kernel is the running kernel's files, a variable so tests could move it.
var kernel = linux.Default()

// pageSize is the size of the pages calibrate measures: a tier's figures
// are per 4096-byte page (tier.Tier.PageSizeBytes).
const pageSize = 4096

// swapon(2) flags (linux/swap.h).
const (
	swapFlagPrefer   = 0x8000
	swapFlagPrioMask = 0x7fff
)

// mincore reports in vec, one byte per page of b, whether each is resident
// (bit 0).
func mincore(b []byte, vec []byte) error {
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return e
	}
	return nil
}

// device is a swap device calibrate created and will remove.
type device struct {
	path    string // /dev/zramN or the swap file
	zram    int    // N, or -1 for a swap file
	algo    string // zram's compressor
	swapOn  bool
	removed bool
}

// Run sets up the tier's device (only with o.Setup), measures every
// content, restores the machine (swapoff, remove the device) on every path,
// and returns the measured tier.
func Run(ctx context.Context, o Options) (t *tier.Tier, err error) {
	o, err = o.withDefaults()
	if err != nil {
		return nil, err
	}
	if !o.Setup {
		return nil, errors.New("calibrate: nothing was changed: calibrate creates its own swap device and removes it afterwards only when told to (--setup); --dry-run shows what it would do")
	}
	if linux.PageSize() != pageSize {
		return nil, fmt.Errorf("calibrate: page size %d: only 4096-byte pages are supported", linux.PageSize())
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("calibrate: needs root (to create and swapon a device)")
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	unlock, err := lockZram(ctx, logf)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if kernel.ZswapEnabled() {
		return nil, errors.New("calibrate: zswap is enabled on this machine: reclaimed pages would go to zswap before any swap device, so the device cannot be measured alone")
	}
	swaps, err := readSwaps()
	if err != nil {
		return nil, err
	}
	for _, s := range swaps {
		if s.Priority >= Priority {
			return nil, fmt.Errorf("calibrate: swap device %s already has priority %d: calibrate's pages could go there; it changes nothing and stops", s.Filename, s.Priority)
		}
	}
	dev, err := setUp(o, logf)
	if dev != nil {
		defer func() {
			if cerr := dev.tearDown(logf); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	if err != nil {
		return nil, err
	}
	if err := checkOurs(dev); err != nil {
		return nil, err
	}
	// A warm-up round, not recorded: the first reclaim and swap-ins on a
	// new device pay for setting it up (swap clusters, allocator pools).
	half, _ := contentNamed("half")
	if _, err := measure(dev, "warm-up", 512, func(buf []byte) error { half.fill(buf, pageSize, o.Seed^0xff); return nil }, o.Seed); err != nil {
		return nil, err
	}
	t = &tier.Tier{Name: o.Tier, Measured: true, PageSizeBytes: pageSize}
	var chosen *measurement
	for i, name := range o.Contents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, _ := contentNamed(name)
		logf("calibrate: content %s: %d pages", name, o.Pages)
		m, err := measure(dev, name, o.Pages, func(buf []byte) error { c.fill(buf, pageSize, o.Seed+uint64(i)); return nil }, o.Seed)
		if err != nil {
			return nil, err
		}
		t.Contents = append(t.Contents, m.content)
		if name == o.Content {
			chosen = m
		}
	}
	if o.PID != 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pages, label, err := samplePID(ctx, o.PID, o.PIDPages, o.Seed, logf)
		if err != nil {
			return nil, err
		}
		logf("calibrate: %s: %d pages", label, len(pages)/pageSize)
		m, err := measure(dev, label, len(pages)/pageSize, func(buf []byte) error { copy(buf, pages); return nil }, o.Seed)
		if err != nil {
			return nil, err
		}
		t.Contents = append(t.Contents, m.content)
		if o.Content == "" {
			chosen = m
		}
	}
	t.PromotionNs = *chosen.content.PromotionNs
	res := chosen.resident
	t.ResidentTouchNs = &res
	t.DemotionNsPerPage = chosen.content.DemotionNsPerPage
	if o.Tier == "zram" {
		t.StoredBytesPerPage = chosen.content.StoredBytesPerPage()
	}
	t.Content = chosen.content.Name
	t.Source = source(o, dev.algo, chosen.content.Name)
	return t, t.Validate()
}

// source describes the measurement: command, kernel, compressor, CPUs, date.
func source(o Options, algo, content string) string {
	var u unix.Utsname
	unix.Uname(&u)
	rel := unix.ByteSliceToString(u.Release[:])
	s := fmt.Sprintf("mdk calibrate --tier %s: Linux %s", o.Tier, rel)
	if o.Tier == "zram" {
		s += ", " + algo
	}
	return s + fmt.Sprintf(", %d CPUs, %d pages per content, figures for content %q, %s; swap-in timed as a touch after madvise(MADV_PAGEOUT)",
		runtime.NumCPU(), o.Pages, content, time.Now().UTC().Format("2006-01-02"))
}

func readSwaps() ([]linux.Swap, error) {
	sw, err := kernel.Swaps()
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	return sw, nil
}

// LockFile, in the temporary directory, is the lock every mdk process that
// swaps on a device of its own holds while it does (calibrate, and mdk's
// zram tests): the kernel spreads swap over devices of equal priority, and
// one's swapoff would swap the other's pages back in, so they take turns.
const LockFile = "mdk-zram-test.lock"

// lockWait bounds the wait for LockFile.
const lockWait = 15 * time.Minute

// lockZram takes LockFile, waiting for another holder (up to lockWait or
// until ctx ends), and returns its release.
func lockZram(ctx context.Context, logf func(string, ...any)) (func(), error) {
	path := filepath.Join(os.TempDir(), LockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("calibrate: lock: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for waited := false; ; waited = true {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("calibrate: lock %s: %w", path, err)
		}
		if !waited {
			logf("calibrate: waiting for %s: another mdk process has a swap device of its own", path)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("calibrate: %s still locked after %v: another mdk process keeps a swap device of its own", path, lockWait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return func() { f.Close() }, nil
}

// setUp creates the device and swaps on it. A non-nil device is returned
// whenever something was created, even with an error, so that the caller
// tears it down.
func setUp(o Options, logf func(string, ...any)) (*device, error) {
	size := deviceBytes(o)
	var d *device
	switch o.Tier {
	case "zram":
		n, err := kernel.ZramHotAdd()
		if err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		d = &device{path: "/dev/zram" + strconv.Itoa(n), zram: n}
		logf("calibrate: created zram%d", n)
		if o.Algorithm != "" {
			if err := kernel.ZramSetAlgorithm(n, o.Algorithm); err != nil {
				return d, fmt.Errorf("calibrate: zram%d compressor %q: %w", n, o.Algorithm, err)
			}
		}
		if a, err := kernel.ZramAlgorithm(n); err == nil {
			d.algo = a
		}
		if err := kernel.ZramSetDisksize(n, size); err != nil {
			return d, fmt.Errorf("calibrate: zram%d disksize: %w", n, err)
		}
	case "swapfile":
		f, err := os.CreateTemp(o.Dir, ".mdk-calibrate-*.swap")
		if err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		d = &device{path: f.Name(), zram: -1}
		logf("calibrate: created %s", d.path)
		err = f.Chmod(0o600)
		if err == nil {
			err = unix.Fallocate(int(f.Fd()), 0, 0, size)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return d, fmt.Errorf("calibrate: swap file %s: %w", d.path, err)
		}
	}
	if out, err := exec.Command("mkswap", d.path).CombinedOutput(); err != nil {
		return d, fmt.Errorf("calibrate: mkswap %s: %v: %s", d.path, err, strings.TrimSpace(string(out)))
	}
	p, err := unix.BytePtrFromString(d.path)
	if err != nil {
		return d, err
	}
	flags := swapFlagPrefer | (Priority & swapFlagPrioMask)
	if _, _, e := unix.Syscall(unix.SYS_SWAPON, uintptr(unsafe.Pointer(p)), uintptr(flags), 0); e != 0 {
		return d, fmt.Errorf("calibrate: swapon %s: %w", d.path, e)
	}
	d.swapOn = true
	logf("calibrate: swapon %s at priority %d", d.path, Priority)
	return d, nil
}

// checkOurs checks that /proc/swaps lists the device at our priority and
// that no other device has it.
func checkOurs(d *device) error {
	swaps, err := readSwaps()
	if err != nil {
		return err
	}
	found := false
	for _, s := range swaps {
		ours := s.Filename == d.path || (d.zram >= 0 && strings.HasSuffix(s.Filename, "/zram"+strconv.Itoa(d.zram)))
		switch {
		case ours && s.Priority == Priority:
			found = true
		case !ours && s.Priority >= Priority:
			return fmt.Errorf("calibrate: swap device %s has priority %d too: the measurement could use it", s.Filename, s.Priority)
		}
	}
	if !found {
		return fmt.Errorf("calibrate: %s is not in /proc/swaps at priority %d after swapon", d.path, Priority)
	}
	return nil
}

// tearDown swaps the device off (bringing back any page still on it, all of
// them calibrate's) and removes it.
func (d *device) tearDown(logf func(string, ...any)) error {
	var errs []error
	if d.swapOn {
		p, _ := unix.BytePtrFromString(d.path)
		if _, _, e := unix.Syscall(unix.SYS_SWAPOFF, uintptr(unsafe.Pointer(p)), 0, 0); e != 0 {
			errs = append(errs, fmt.Errorf("calibrate: swapoff %s: %w (remove it by hand: swapoff %s", d.path, e, d.path))
		} else {
			d.swapOn = false
			logf("calibrate: swapoff %s", d.path)
		}
	}
	if d.swapOn {
		return errors.Join(errs...)
	}
	if d.zram >= 0 {
		// hot_remove answers EBUSY while udev still holds the new device
		// open; retry for a while.
		var err error
		for i := 0; i < 50; i++ {
			if err = kernel.ZramHotRemove(d.zram); err == nil || !errors.Is(err, unix.EBUSY) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("calibrate: remove zram%d: %w (remove it by hand: echo %d > %s/hot_remove)", d.zram, err, d.zram, kernel.ZramControl()))
		} else {
			logf("calibrate: removed zram%d", d.zram)
		}
	} else if err := os.Remove(d.path); err != nil {
		errs = append(errs, fmt.Errorf("calibrate: %w", err))
	} else {
		logf("calibrate: removed %s", d.path)
	}
	return errors.Join(errs...)
}

// measurement is one content's figures.
type measurement struct {
	content  tier.Content
	resident tier.Latency
}

// usedKiB returns the device's used swap in /proc/swaps.
func (d *device) usedKiB() (int64, error) {
	swaps, err := readSwaps()
	if err != nil {
		return 0, err
	}
	for _, s := range swaps {
		if s.Filename == d.path {
			return s.UsedBytes >> 10, nil
		}
	}
	return 0, fmt.Errorf("calibrate: %s is no longer in /proc/swaps", d.path)
}

// mmStat reads the device's mm_stat (zeros for a swap file).
func (d *device) mmStat() (linux.ZramStat, error) {
	if d.zram < 0 {
		return linux.ZramStat{}, nil
	}
	z, err := kernel.ZramStat("zram" + strconv.Itoa(d.zram))
	if err != nil {
		return linux.ZramStat{}, fmt.Errorf("calibrate: %w", err)
	}
	return z, nil
}

// threadCPU returns the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}

// sink keeps the touches' loads from being optimised away.
var sink byte

// measure maps pages of memory, fills them, reclaims them to the device and
// times a touch of each reclaimed page (a swap-in), then a second touch of
// each (resident).
//
//  1. mmap anonymous private memory and fill it (every page written).
//  2. Check with mincore that every page is resident; read mm_stat.
//  3. madvise(MADV_PAGEOUT) the whole range, timed: the swap-out cost.
//  4. mincore again: the pages now absent were reclaimed; mm_stat again:
//     the device must hold exactly those pages (else they went elsewhere).
//  5. Touch each reclaimed page once, in a random order, timing each load.
//  6. Touch them again in the same order: resident touches.
func measure(d *device, name string, pages int, fill func([]byte) error, seed uint64) (*measurement, error) {
	// 1.
	buf, err := unix.Mmap(-1, 0, pages*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("calibrate: mmap %d pages: %w", pages, err)
	}
	defer unix.Munmap(buf)
	// No transparent huge pages: they would be split or swapped whole.
	unix.Madvise(buf, unix.MADV_NOHUGEPAGE)
	if err := fill(buf); err != nil {
		return nil, err
	}
	// 2.
	vec := make([]byte, pages)
	if err := mincore(buf, vec); err != nil {
		return nil, fmt.Errorf("calibrate: mincore: %w", err)
	}
	for i, v := range vec {
		if v&1 == 0 {
			return nil, fmt.Errorf("calibrate: %s: page %d not resident after filling it", name, i)
		}
	}
	before, err := d.mmStat()
	if err != nil {
		return nil, err
	}
	usedBefore, err := d.usedKiB()
	if err != nil {
		return nil, err
	}
	// 3.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	if err := unix.Madvise(buf, unix.MADV_PAGEOUT); err != nil {
		return nil, fmt.Errorf("calibrate: madvise(MADV_PAGEOUT): %w (kernel 5.4 or later is needed)", err)
	}
	out := threadCPU() - c0
	// 4.
	if err := mincore(buf, vec); err != nil {
		return nil, fmt.Errorf("calibrate: mincore: %w", err)
	}
	var reclaimed []int
	for i, v := range vec {
		if v&1 == 0 {
			reclaimed = append(reclaimed, i)
		}
	}
	if len(reclaimed) < pages*9/10 && d.zram < 0 {
		// Measured on Linux 6.18: the pages were written to the file
		// asynchronously and stay in the swap cache (mincore counts them
		// resident); a touch would be a minor fault, not a read.
		return nil, fmt.Errorf("calibrate: %s: madvise(MADV_PAGEOUT) left %d of %d pages in the swap cache: a swap file is written asynchronously and its pages are freed only under memory pressure, so its swap-in cannot be timed this way (use the built-in ssd figures)", name, pages-len(reclaimed), pages)
	}
	if len(reclaimed) < pages*9/10 {
		return nil, fmt.Errorf("calibrate: %s: madvise(MADV_PAGEOUT) reclaimed %d of %d pages: is the device full, or swap disabled for this cgroup?", name, len(reclaimed), pages)
	}
	after, err := d.mmStat()
	if err != nil {
		return nil, err
	}
	// Every reclaimed page has a slot on our device (zero-filled pages
	// too: since Linux 6.12 the swap layer keeps them in a bitmap and
	// writes nothing to the device, but the slot is ours).
	usedAfter, err := d.usedKiB()
	if err != nil {
		return nil, err
	}
	if got, want := usedAfter-usedBefore, int64(len(reclaimed))*pageSize/1024; got != want {
		return nil, fmt.Errorf("calibrate: %s: %s took %d KiB of swap for %d reclaimed pages (%d KiB): some went to another swap device", name, d.path, got, len(reclaimed), want)
	}
	// 5.
	rng := rand.New(rand.NewPCG(seed, 0x853c49e6748fea9b))
	rng.Shuffle(len(reclaimed), func(i, j int) { reclaimed[i], reclaimed[j] = reclaimed[j], reclaimed[i] })
	in := make([]int64, len(reclaimed))
	c0 = threadCPU()
	for k, i := range reclaimed {
		t := time.Now()
		sink += buf[i*pageSize]
		in[k] = int64(time.Since(t))
	}
	inCPU := threadCPU() - c0
	// 6.
	res := make([]int64, len(reclaimed))
	c0 = threadCPU()
	for k, i := range reclaimed {
		t := time.Now()
		sink += buf[i*pageSize+64]
		res[k] = int64(time.Since(t))
	}
	resCPU := threadCPU() - c0
	lat := latency(in)
	resident := latency(res)
	if d.zram >= 0 {
		// zram decompresses on the faulting CPU without sleeping: the
		// thread's CPU time is the cost, without the descheduled time.
		lat.Mean = float64(inCPU) / float64(len(in))
		resident.Mean = float64(resCPU) / float64(len(res))
	}
	m := &measurement{
		content: tier.Content{
			Name:              name,
			Pages:             int64(len(reclaimed)),
			OrigBytes:         after.OrigDataBytes - before.OrigDataBytes,
			ComprBytes:        after.ComprDataBytes - before.ComprDataBytes,
			MemUsedBytes:      after.MemUsedBytes - before.MemUsedBytes,
			SamePages:         after.SamePages - before.SamePages,
			PromotionNs:       &lat,
			DemotionNsPerPage: float64(out) / float64(len(reclaimed)),
		},
		resident: resident,
	}
	if d.zram < 0 {
		m.content.OrigBytes, m.content.ComprBytes, m.content.MemUsedBytes, m.content.SamePages = 0, 0, 0, 0
	}
	return m, nil
}

// samplePID copies up to n present anonymous pages of process pid, chosen
// at random, through /proc/PID/mem (opened read-only: the process is never
// written). It reads in batches and sleeps between them so that it takes
// little from the process; it gives up on a page it cannot read.
func samplePID(ctx context.Context, pid, n int, seed uint64, logf func(string, ...any)) ([]byte, string, error) {
	label := fmt.Sprintf("pid %d (%s)", pid, kernel.Comm(pid))
	ms, err := kernel.Maps(pid)
	if err != nil {
		return nil, "", fmt.Errorf("calibrate: --pid: %w", err)
	}
	mem, err := kernel.OpenMem(pid)
	if err != nil {
		return nil, "", fmt.Errorf("calibrate: --pid: %w", err)
	}
	defer mem.Close()
	pm, err := kernel.OpenPagemap(pid)
	if err != nil {
		return nil, "", fmt.Errorf("calibrate: --pid: %w", err)
	}
	defer pm.Close()
	var entry [1]uint64
	pick := newPagePicker(ms, pageSize, seed)
	out := make([]byte, 0, n*pageSize)
	page := make([]byte, pageSize)
	tries := 0
	for len(out) < n*pageSize && tries < 50*n {
		addr, ok := pick.Next()
		if !ok {
			break
		}
		tries++
		if tries%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, "", err
			}
			time.Sleep(time.Millisecond) // back off
		}
		if err := pm.Read(addr/pageSize, entry[:]); err != nil || entry[0]&linux.PagemapPresent == 0 {
			continue
		}
		if _, err := mem.ReadAt(page, int64(addr)); err != nil {
			continue
		}
		out = append(out, page...)
	}
	if len(out) < 64*pageSize {
		return nil, "", fmt.Errorf("calibrate: --pid %d: found only %d present anonymous pages in %d tries (of %d mapped)", pid, len(out)/pageSize, tries, pick.Pages())
	}
	logf("calibrate: sampled %d present pages of %s in %d tries", len(out)/pageSize, label, tries)
	return out, label, nil
}
