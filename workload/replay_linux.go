//go:build linux

package workload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"mdk/trace"
)

// Replay runs the replay workload of t: it maps the trace's pages, writes
// its Hello to out, and serves the commands read from in (see the package
// documentation) until "q" or the end of in.
func Replay(t *trace.Trace, opt Options, in io.Reader, out io.Writer) error {
	ps := unix.Getpagesize()
	n := max(len(t.Pages), 1)
	mem, err := unix.Mmap(-1, 0, n*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return fmt.Errorf("workload: map %d pages: %w", n, err)
	}
	defer unix.Munmap(mem)
	// Best effort: on a kernel without THP the advice is EINVAL.
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE)
	if opt.Lock < 0 || opt.Lock > len(t.Pages) {
		return fmt.Errorf("workload: cannot lock %d of %d pages", opt.Lock, len(t.Pages))
	}
	if opt.Lock > 0 {
		if err := unix.Mlock(mem[:opt.Lock*ps]); err != nil {
			return fmt.Errorf("workload: mlock %d pages: %w", opt.Lock, err)
		}
	}
	base := uint64(uintptr(unsafe.Pointer(&mem[0])))
	enc := json.NewEncoder(out)
	if err := enc.Encode(Hello{PID: os.Getpid(), Base: base, Pages: len(t.Pages), PageSize: ps, Windows: len(t.Windows), Locked: opt.Lock}); err != nil {
		return err
	}
	rp := &replayer{t: t, mem: mem, ps: ps, alive: make([]bool, len(t.Pages))}
	sc := bufio.NewScanner(in)
	if opt.Window > 0 {
		// Self-clocked: window k's touches at start + k*Window + Window/2,
		// the middle of the window of a tracker that scans at the
		// boundaries; then wait for the end of the input.
		start := time.Now()
		for k := range t.Windows {
			time.Sleep(time.Until(start.Add(time.Duration(k)*opt.Window + opt.Window/2)))
			if err := enc.Encode(rp.window(k)); err != nil {
				return err
			}
		}
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "q" {
				return nil
			}
		}
		return sc.Err()
	}
	next := 0
	for sc.Scan() {
		cmd := strings.TrimSpace(sc.Text())
		if cmd == "q" {
			return nil
		}
		arg, ok := strings.CutPrefix(cmd, "w ")
		k, err := strconv.Atoi(arg)
		if !ok || err != nil {
			return fmt.Errorf("workload: command %q: expected \"w WINDOW\" or \"q\"", cmd)
		}
		if k != next || k >= len(t.Windows) {
			return fmt.Errorf("workload: asked for window %d, expected %d (the trace has %d windows)", k, next, len(t.Windows))
		}
		next++
		if err := enc.Encode(rp.window(k)); err != nil {
			return err
		}
	}
	return sc.Err()
}

// replayer is the state of a replay: the mapped pages and their lives.
type replayer struct {
	t   *trace.Trace
	mem []byte
	ps  int
	lat []int64
	// alive follows SPEC section 1's lives, so that a birth of a page
	// already alive (which the model ignores) does not touch it.
	alive []bool
}

// window releases the pages freed in window k-1 and touches window k's.
func (rp *replayer) window(k int) Window {
	t, mem, ps := rp.t, rp.mem, rp.ps
	w := Window{Window: k}
	if k > 0 {
		for _, id := range t.Windows[k-1].Freed {
			// MADV_DONTNEED of a private anonymous page cannot fail.
			_ = unix.Madvise(mem[int(id)*ps:(int(id)+1)*ps], unix.MADV_DONTNEED)
			rp.alive[id] = false
			w.Freed++
		}
	}
	win := &t.Windows[k]
	lat := rp.lat[:0]
	var total time.Duration
	for _, id := range win.Accessed {
		start := time.Now()
		mem[int(id)*ps]++
		d := time.Since(start)
		total += d
		lat = append(lat, int64(d))
		rp.alive[id] = true
	}
	w.Accessed = len(win.Accessed)
	for _, id := range win.Born {
		if !rp.alive[id] {
			mem[int(id)*ps+1]++
			rp.alive[id] = true
			w.Born++
		}
	}
	summarize(&w, lat, total)
	rp.lat = lat
	return w
}
