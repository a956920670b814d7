package linux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var lineRef = regexp.MustCompile(`^x:\d+: `)

// FuzzParseMaps: no panic; errors name the line; mappings come out sorted,
// page-aligned and non-empty.
func FuzzParseMaps(f *testing.F) {
	seed, err := os.ReadFile("testdata/maps_cat.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("00400000-00401000 r-xp 00000000 08:02 1 /bin/x y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := ParseMaps(bytes.NewReader(data), "x")
		if err != nil {
			if !lineRef.MatchString(strings.TrimPrefix(err.Error(), ErrFormat.Error()+": ")) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for i, m := range ms {
			if m.Start >= m.End || m.Start%uint64(PageSize()) != 0 || m.End%uint64(PageSize()) != 0 || i > 0 && m.Start < ms[i-1].End {
				t.Fatalf("bad mapping %d: %+v", i, m)
			}
		}
	})
}

// FuzzPagemap: reading any bytes as a pagemap at any offset either gives
// the entries (zero past the end) or an error naming the byte offset.
func FuzzPagemap(f *testing.F) {
	var b []byte
	for _, e := range []uint64{0, PagemapPresent | 0x1234, PagemapSwapped | 0x21} {
		b = binary.NativeEndian.AppendUint64(b, e)
	}
	f.Add(b, uint64(0), uint16(5))
	f.Add(b[:13], uint64(1), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, first uint64, n uint16) {
		pm := &Pagemap{f: bytes.NewReader(data), c: io.NopCloser(nil), name: "pm"}
		dst := make([]uint64, n)
		err := pm.Read(first, dst)
		if err != nil {
			if !strings.Contains(err.Error(), "byte") && !strings.Contains(err.Error(), "out of range") {
				t.Fatalf("error without an offset: %v", err)
			}
			return
		}
		for i, e := range dst {
			off := (first + uint64(i)) * 8
			var want uint64
			if off+8 <= uint64(len(data)) {
				want = binary.NativeEndian.Uint64(data[off:])
			}
			if e != want {
				t.Fatalf("entry %d = %#x, want %#x", i, e, want)
			}
		}
	})
}

// FuzzZramStat: any bytes parse to non-negative counters or an ErrFormat
// error naming the file.
func FuzzZramStat(f *testing.F) {
	f.Add([]byte("    8192     2375    12288        0    12288        0        0        3        0\n"))
	f.Add([]byte("1 2 3 4 5 6"))
	f.Fuzz(func(t *testing.T, b []byte) {
		z, err := ParseZramStat(b, "x")
		if err != nil {
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "x: ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		if z.OrigDataBytes < 0 || z.ComprDataBytes < 0 || z.MemUsedBytes < 0 || z.SamePages < 0 || z.HugePages < 0 {
			t.Fatalf("negative counters %+v", z)
		}
	})
}

// FuzzKeyValues: every key returned was asked for and is on a line of the
// file; errors name the line.
func FuzzKeyValues(f *testing.F) {
	f.Add([]byte("pswpin 7\nnr_free_pages 12\npswpout 9\n"))
	f.Add([]byte("pswpin x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		kv, err := ParseKeyValues(b, "x", []string{"pswpin", "pswpout"})
		if err != nil {
			if !errors.Is(err, ErrFormat) || !lineRef.MatchString(strings.TrimPrefix(err.Error(), ErrFormat.Error()+": ")) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for k := range kv {
			if k != "pswpin" && k != "pswpout" || !bytes.Contains(b, []byte(k+" ")) {
				t.Fatalf("key %q", k)
			}
		}
	})
}

// FuzzCgroupProcs: pids come out positive; errors name the line.
func FuzzCgroupProcs(f *testing.F) {
	f.Add([]byte("1\n42\n"))
	f.Add([]byte("1\nx\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pids, err := ParseCgroupProcs(b, "x")
		if err != nil {
			if !lineRef.MatchString(strings.TrimPrefix(err.Error(), ErrFormat.Error()+": ")) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for _, p := range pids {
			if p <= 0 {
				t.Fatalf("pid %d", p)
			}
		}
	})
}

// FuzzMGLRU: never panics; the kernel's masks and y/n parse as documented.
func FuzzMGLRU(f *testing.F) {
	f.Add([]byte("0x0007\n"))
	f.Add([]byte("n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		on := ParseMGLRU(b)
		if s := strings.TrimSpace(string(b)); (s == "0x0000" || s == "0" || s == "n") && on {
			t.Fatalf("%q read as on", b)
		}
	})
}

// FuzzSwaps: /proc/swaps through prometheus/procfs: sizes come out
// non-negative, errors are ErrFormat naming the file.
func FuzzSwaps(f *testing.F) {
	f.Add([]byte("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram1 partition\t65532\t\t12\t\t100\n"))
	f.Add([]byte("h\n/dev/x partition 1 z 3\n"))
	fsys := NewFS(f.TempDir(), f.TempDir())
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(filepath.Join(fsys.Proc, "swaps"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		sw, err := fsys.Swaps()
		if err != nil {
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "/swaps: ") {
				t.Fatalf("error %v", err)
			}
			return
		}
		for _, s := range sw {
			if s.SizeBytes < 0 || s.UsedBytes < 0 {
				t.Fatalf("negative sizes %+v", s)
			}
		}
	})
}

// FuzzMemoryPressure: a pressure file through prometheus/procfs: a value
// or an ErrFormat error naming the file, never a panic.
func FuzzMemoryPressure(f *testing.F) {
	f.Add([]byte("some avg10=1.50 avg60=0.00 avg300=0.00 total=7\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	f.Add([]byte("some avg10=x\n"))
	dir := f.TempDir()
	path := filepath.Join(dir, "memory.pressure")
	fsys := NewFS(dir, dir)
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.MemoryPressure(path); err != nil && (!errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), path)) {
			t.Fatalf("error %v", err)
		}
	})
}

// FuzzDamonRegions: a tried_regions directory of any contents reads as
// regions sorted by start with end > start, or an error.
func FuzzDamonRegions(f *testing.F) {
	f.Add("4096", "12288", "3", "0", "0", "1", "0", "0")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s0, e0, a0, g0, s1, e1, a1, g1 string) {
		for i, v := range [][4]string{{s0, e0, a0, g0}, {s1, e1, a1, g1}} {
			d := filepath.Join(dir, strconv.Itoa(i))
			os.MkdirAll(d, 0o755)
			for j, name := range []string{"start", "end", "nr_accesses", "age"} {
				if err := os.WriteFile(filepath.Join(d, name), []byte(v[j]), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		rs, err := ReadDamonRegions(dir, nil)
		if err != nil {
			return
		}
		for i, r := range rs {
			if r.End <= r.Start || i > 0 && r.Start < rs[i-1].Start {
				t.Fatalf("regions %+v", rs)
			}
		}
	})
}
