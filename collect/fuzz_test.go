package collect

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

var lineRef = regexp.MustCompile(`^x:\d+: `)

// FuzzLackeyReader: no panic; every error names the line; every window
// obeys the Reader contract (checked by windowSets).
func FuzzLackeyReader(f *testing.F) {
	seed, err := os.ReadFile("testdata/fixtures/lackey_true.log")
	if err != nil {
		f.Fatal(err)
	}
	// The first lines of a real log keep each run short.
	lines := bytes.SplitAfter(seed, []byte("\n"))
	f.Add(bytes.Join(lines[:60], nil), int64(10))
	f.Add([]byte("I  1000,4\n S ffc,8\n M 1ffe,4\n==1== x\n--1-- y\n**1** z\n"), int64(1))
	f.Add([]byte("I  ffffffffffffffff,1\n L fffffffffffffff0,16\n"), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, n int64) {
		if n < 1 || n > 1<<20 {
			n = 1
		}
		_, err := windowSets(t, NewLackeyReader(bytes.NewReader(data), "x", n))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || !lineRef.MatchString(err.Error()) {
				t.Fatalf("error without a line: %v", err)
			}
		}
	})
}

// FuzzParseMaps: no panic; errors name the line; mappings come out sorted,
// page-aligned and non-empty.
func FuzzParseMaps(f *testing.F) {
	seed, err := os.ReadFile("testdata/fixtures/maps_cat.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("00400000-00401000 r-xp 00000000 08:02 1 /bin/x y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := parseMaps(bytes.NewReader(data), "x")
		if err != nil {
			if !lineRef.MatchString(strings.TrimPrefix(err.Error(), ErrFormat.Error()+": ")) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		for i, m := range ms {
			if m.Start >= m.End || m.Start%4096 != 0 || m.End%4096 != 0 || i > 0 && m.Start < ms[i-1].End {
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
