//go:build linux

package workload

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// Maps is the mappings workload: a process with two mappings of known
// place, size and offset, for the tests of the recorder's mappings sidecar.
//
//   - File: a file of FilePages pages written at Path, of which MapPages
//     pages from page Offset on are mapped shared and read-only (r--s,
//     file offset Offset*4096);
//   - Anon: AnonPages anonymous private pages (rw-p), fenced by a
//     PROT_NONE page on each side so that the kernel cannot merge them
//     with a neighbouring anonymous mapping.
//
// Every page of both is touched once, so each is present.
type Maps struct {
	Path                                   string
	FilePages, Offset, MapPages, AnonPages int
}

// RunMaps writes the file, maps both, touches them, prints "ready
// FILE-START-HEX ANON-START-HEX" to out and waits until in reaches end of
// file or a line "exit"; then it unmaps both and removes the file.
func RunMaps(m Maps, in io.Reader, out io.Writer) error {
	const ps = 4096
	if m.Offset < 0 || m.MapPages < 1 || m.Offset+m.MapPages > m.FilePages || m.AnonPages < 1 {
		return fmt.Errorf("maps: %d pages from page %d of a %d-page file, %d anonymous pages: not a fit", m.MapPages, m.Offset, m.FilePages, m.AnonPages)
	}
	data := make([]byte, m.FilePages*ps)
	for i := range data {
		data[i] = byte(i / ps)
	}
	if err := os.WriteFile(m.Path, data, 0o644); err != nil {
		return err
	}
	defer os.Remove(m.Path)
	f, err := os.Open(m.Path)
	if err != nil {
		return err
	}
	file, err := syscall.Mmap(int(f.Fd()), int64(m.Offset*ps), m.MapPages*ps, syscall.PROT_READ, syscall.MAP_SHARED)
	f.Close()
	if err != nil {
		return fmt.Errorf("mmap %s: %w", m.Path, err)
	}
	defer syscall.Munmap(file)
	fenced, err := syscall.Mmap(-1, 0, (m.AnonPages+2)*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("mmap anonymous: %w", err)
	}
	defer syscall.Munmap(fenced)
	if err := syscall.Mprotect(fenced[:ps], syscall.PROT_NONE); err != nil {
		return fmt.Errorf("mprotect: %w", err)
	}
	if err := syscall.Mprotect(fenced[(m.AnonPages+1)*ps:], syscall.PROT_NONE); err != nil {
		return fmt.Errorf("mprotect: %w", err)
	}
	anon := fenced[ps : (m.AnonPages+1)*ps]
	if err := syscall.Madvise(anon, syscall.MADV_NOHUGEPAGE); err != nil {
		return fmt.Errorf("madvise(MADV_NOHUGEPAGE): %w", err)
	}
	var sum byte
	for i := 0; i < len(file); i += ps {
		sum += file[i]
	}
	for i := 0; i < len(anon); i += ps {
		anon[i] = sum + 1
	}
	fmt.Fprintf(out, "ready %x %x\n", uintptr(unsafe.Pointer(&file[0])), uintptr(unsafe.Pointer(&anon[0])))
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() == "exit" {
			break
		}
	}
	return sc.Err()
}
