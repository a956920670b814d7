package workload

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Run maps the arena, runs s's initial faults, prints the ready line to out
// and obeys the commands read from in (see the package documentation).
func Run(s Schedule, in io.Reader, out io.Writer) error {
	arena, err := syscall.Mmap(-1, 0, s.Pages*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("mmap arena: %w", err)
	}
	// 4 KiB pages only: with THP "always" a fault could bring in 512 pages.
	if err := syscall.Madvise(arena, 14 /* MADV_NOHUGEPAGE */); err != nil {
		return fmt.Errorf("madvise(MADV_NOHUGEPAGE): %w", err)
	}
	for _, i := range s.Initial {
		arena[i*4096]++
	}
	fmt.Fprintf(out, "ready %x %d\n", uintptr(unsafe.Pointer(&arena[0])), s.Pages)
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && f[0] == "exit":
			return syscall.Munmap(arena)
		case len(f) >= 2 && f[0] == "phase":
			k, err := strconv.Atoi(f[1])
			if err != nil || k < 0 || k >= len(s.Phases) {
				return fmt.Errorf("bad phase %q", f[1])
			}
			var repeat time.Duration
			if len(f) == 3 {
				ms, err := strconv.Atoi(f[2])
				if err != nil {
					return fmt.Errorf("bad repeat %q", f[2])
				}
				repeat = time.Duration(ms) * time.Millisecond
			}
			if err := runPhase(arena, s.Phases[k], repeat); err != nil {
				return err
			}
			fmt.Fprintf(out, "done %d\n", k)
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	return sc.Err()
}

func runPhase(arena []byte, p Phase, repeat time.Duration) error {
	for _, i := range p.Free {
		if err := syscall.Madvise(arena[i*4096:(i+1)*4096], syscall.MADV_DONTNEED); err != nil {
			return fmt.Errorf("madvise(MADV_DONTNEED) page %d: %w", i, err)
		}
	}
	for _, i := range p.Alloc {
		arena[i*4096]++
	}
	end := time.Now().Add(repeat)
	for {
		for _, i := range p.Touch {
			arena[i*4096]++
		}
		if !time.Now().Before(end) {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}
