package collect

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

func TestParseMaps(t *testing.T) {
	// A sample of a real maps file (this machine, /proc/self/maps of cat).
	const sample = `55d4c6c2a000-55d4c6c2c000 r--p 00000000 fe:01 1835092                    /usr/bin/cat
55d4c6c2c000-55d4c6c31000 r-xp 00002000 fe:01 1835092                    /usr/bin/cat
55d4c7a8e000-55d4c7aaf000 rw-p 00000000 00:00 0                          [heap]
7f1b7c000000-7f1b7c021000 rw-p 00000000 00:00 0 
7f1b7c600000-7f1b7c601000 rw-s 00000000 00:05 42                         /memfd:a b (deleted)
7ffc1b5f6000-7ffc1b617000 rw-p 00000000 00:00 0                          [stack]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
`
	got, err := parseMaps(strings.NewReader(sample), "maps")
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{0x55d4c6c2a000, 0x55d4c6c2c000, "r--p", "/usr/bin/cat"},
		{0x55d4c6c2c000, 0x55d4c6c31000, "r-xp", "/usr/bin/cat"},
		{0x55d4c7a8e000, 0x55d4c7aaf000, "rw-p", "[heap]"},
		{0x7f1b7c000000, 0x7f1b7c021000, "rw-p", ""},
		{0x7f1b7c600000, 0x7f1b7c601000, "rw-s", "/memfd:a b (deleted)"},
		{0x7ffc1b5f6000, 0x7ffc1b617000, "rw-p", "[stack]"},
		{0xffffffffff600000, 0xffffffffff601000, "--xp", "[vsyscall]"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestParseMapsErrors(t *testing.T) {
	ok := "00400000-00401000 r-xp 00000000 08:02 1 /bin/x\n"
	tests := []struct{ in, want string }{
		{ok + "garbage\n", "maps:2: expected"},
		{"00401000-00400000 r-xp 00000000 08:02 1\n", "maps:1: bad address range"},
		{"00400001-00401000 r-xp 00000000 08:02 1\n", "maps:1: bad address range"},
		{"00400000-00401000 r-xq 00000000 08:02 1\n", "maps:1: bad permissions"},
		{"00400000-00401000 r-xp zz 08:02 1\n", "maps:1: bad offset"},
		{"00400000-00401000 r-xp 00000000 0802 1\n", "maps:1: bad device"},
		{"00400000-00401000 r-xp 00000000 08:02 x\n", "maps:1: bad inode"},
		{ok + ok, "maps:2: mapping 400000-401000 overlaps"},
	}
	for _, tc := range tests {
		_, err := parseMaps(strings.NewReader(tc.in), "maps")
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestPagemapRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "pagemap")
	var b []byte
	for _, e := range []uint64{0, PagemapPresent | 0x1234, PagemapSwapped | 0x21, PagemapPresent | PagemapPFNMask} {
		b = binary.NativeEndian.AppendUint64(b, e)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	pm := &Pagemap{f: f, c: f, name: path}
	defer pm.Close()
	got := make([]uint64, 6)
	if err := pm.Read(0, got); err != nil {
		t.Fatal(err)
	}
	want := []uint64{0, PagemapPresent | 0x1234, PagemapSwapped | 0x21, PagemapPresent | PagemapPFNMask, 0, 0}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// A file cut inside an entry is not a pagemap.
	os.WriteFile(path, b[:12], 0o644)
	if err := pm.Read(0, got); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "short read of 12 bytes at byte 0") {
		t.Errorf("got %v", err)
	}
}

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

	fsys := NewFS("/proc", "/sys")
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
		if e[i]&PagemapPresent == 0 || e[i]&PagemapPFNMask == 0 {
			t.Fatalf("page %d: entry %#x, want present with a PFN", i, e[i])
		}
		pfns[e[i]&PagemapPFNMask] = true
	}
	if len(pfns) != pages {
		t.Errorf("%d distinct PFNs for %d written pages", len(pfns), pages)
	}
	if e[pages]&(PagemapPresent|PagemapSwapped) != 0 {
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
