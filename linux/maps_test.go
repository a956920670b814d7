package linux

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	got, err := ParseMaps(strings.NewReader(sample), "maps")
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{0x55d4c6c2a000, 0x55d4c6c2c000, "r--p", 0, 1835092, "/usr/bin/cat"},
		{0x55d4c6c2c000, 0x55d4c6c31000, "r-xp", 0x2000, 1835092, "/usr/bin/cat"},
		{0x55d4c7a8e000, 0x55d4c7aaf000, "rw-p", 0, 0, "[heap]"},
		{0x7f1b7c000000, 0x7f1b7c021000, "rw-p", 0, 0, ""},
		{0x7f1b7c600000, 0x7f1b7c601000, "rw-s", 0, 42, "/memfd:a b (deleted)"},
		{0x7ffc1b5f6000, 0x7ffc1b617000, "rw-p", 0, 0, "[stack]"},
		{0xffffffffff600000, 0xffffffffff601000, "--xp", 0, 0, "[vsyscall]"},
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
		_, err := ParseMaps(strings.NewReader(tc.in), "maps")
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
