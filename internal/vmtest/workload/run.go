//go:build linux

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
	if err := syscall.Madvise(arena, syscall.MADV_NOHUGEPAGE); err != nil {
		return fmt.Errorf("madvise(MADV_NOHUGEPAGE): %w", err)
	}
	for _, i := range s.Initial {
		arena[i*4096]++
	}
	fmt.Fprintf(out, "ready %x %d\n", uintptr(unsafe.Pointer(&arena[0])), s.Pages)
	lines := make(chan string)
	var readErr error
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
		readErr = sc.Err()
		close(lines)
	}()
	next, ok := <-lines
	for ok {
		line := next
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && f[0] == "exit":
			return syscall.Munmap(arena)
		case len(f) >= 2 && (f[0] == "phase" || f[0] == "touch"):
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
			p := s.Phases[k]
			if f[0] == "touch" {
				p = Phase{Touch: p.Touch}
			}
			if err := runPhase(arena, p, max(repeat, 0)); err != nil {
				return err
			}
			fmt.Fprintf(out, "done %d\n", k)
			if repeat < 0 {
				// touch again and again until the next command
				t := time.NewTicker(5 * time.Millisecond)
			loop:
				for {
					select {
					case next, ok = <-lines:
						break loop
					case <-t.C:
						runPhase(arena, Phase{Touch: p.Touch}, 0)
					}
				}
				t.Stop()
				continue
			}
		default:
			return fmt.Errorf("unknown command %q", line)
		}
		next, ok = <-lines
	}
	return readErr
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
