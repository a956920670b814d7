//go:build unix

package collect

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"mdk/linux"
)

// TestPagemapRealSelf reads this process's real /proc/self/pagemap: the
// pages of a buffer it has written are present with distinct non-zero page
// frame numbers, and a page it never touched is not present. Reading PFNs
// needs CAP_SYS_ADMIN.
func TestPagemapRealSelf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("reading page frame numbers needs root (CAP_SYS_ADMIN)")
	}
	const pages = 16
	buf, err := syscall.Mmap(-1, 0, (pages+1)*4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(buf)
	for i := 0; i < pages; i++ {
		buf[i*4096+17] = byte(i + 1) // the last page stays untouched
	}
	first := uint64(uintptrOf(buf)) / 4096

	fsys := linux.NewFS("/proc", "/sys")
	pm, err := fsys.OpenPagemap(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	e := make([]uint64, pages+1)
	if err := pm.Read(first, e); err != nil {
		t.Fatal(err)
	}
	pfns := map[uint64]bool{}
	for i := 0; i < pages; i++ {
		if e[i]&linux.PagemapPresent == 0 || e[i]&linux.PagemapPFNMask == 0 {
			t.Fatalf("page %d: entry %#x, want present with a PFN", i, e[i])
		}
		pfns[e[i]&linux.PagemapPFNMask] = true
	}
	if len(pfns) != pages {
		t.Errorf("%d distinct PFNs for %d written pages", len(pfns), pages)
	}
	if e[pages]&(linux.PagemapPresent|linux.PagemapSwapped) != 0 {
		t.Errorf("untouched page: entry %#x, want not present", e[pages])
	}

	// The recorder's own reading of maps + pagemap finds the same pages.
	r := &Recorder{opt: Options{FS: fsys}}
	ents, err := r.readPages(os.Getpid(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, en := range ents {
		if en.vpn >= first && en.vpn < first+pages {
			found++
			if en.pme != e[en.vpn-first] {
				t.Errorf("vpn %#x: recorder read %#x, direct read %#x", en.vpn, en.pme, e[en.vpn-first])
			}
		}
		if en.vpn == first+pages {
			t.Errorf("untouched page listed: %#x", en.pme)
		}
	}
	if found != pages {
		t.Errorf("recorder found %d of the %d written pages", found, pages)
	}
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
