package vmtest

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

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
