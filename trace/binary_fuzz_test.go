package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// FuzzBinaryReader: any input gives windows and then io.EOF or a
// *CorruptError naming the file, never a panic; a file that reads cleanly
// writes back to a file that reads the same.
func FuzzBinaryReader(f *testing.F) {
	golden, _ := filepath.Glob("testdata/*.mdkt")
	for _, g := range golden {
		data, err := os.ReadFile(g)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	rng := testutil.Rand(11)
	for range 5 {
		f.Add(testutil.EncodeBinary(f, binRandom(rng)))
	}
	f.Add([]byte(trace.BinaryMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		binFuzzOne(t, data)
		// Most mutations only fail a checksum; fix the checksums so the
		// decoder behind them is fuzzed too.
		if fixed := binFixCRCs(data); !bytes.Equal(fixed, data) {
			binFuzzOne(t, fixed)
		}
	})
}

func binFuzzOne(t *testing.T, data []byte) {
	binFuzzCount(t, data)
	{
		r, err := trace.NewBinaryReader(bytes.NewReader(data), "fuzz.mdkt")
		if err != nil {
			binCheckErr(t, err)
			return
		}
		tr, err := trace.ReadAll(r)
		if err != nil {
			binCheckErr(t, err)
			return
		}
		binCheckCanonical(t, tr)
		again := binRead(t, testutil.EncodeBinary(t, tr))
		if len(again.Windows) != len(tr.Windows) || len(again.Pages) != len(tr.Pages) {
			t.Fatalf("rewritten file has %d windows and %d pages, want %d and %d", len(again.Windows), len(again.Pages), len(tr.Windows), len(tr.Pages))
		}
	}
}

// binFuzzCount checks that a reader counting new pages (trace.NewCounter)
// reads the same windows as one listing them, up to the same error: the new
// pages it does not keep are checked all the same.
func binFuzzCount(t *testing.T, data []byte) {
	want, werr := binReadPrefix(data)
	r, err := trace.NewBinaryReader(bytes.NewReader(data), "damaged.mdkt")
	if err != nil {
		return // the header's errors do not depend on the windows
	}
	r.(trace.NewCounter).CountNew()
	for w := 0; ; w++ {
		got, err := r.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			if fmt.Sprint(err) != fmt.Sprint(werr) || w != len(want.Windows) {
				t.Fatalf("counting reader: %d windows, then %v; listing reader: %d, then %v", w, err, len(want.Windows), werr)
			}
			return
		}
		ww := &want.Windows[w]
		if len(got.New) != 0 || got.Unlisted != len(ww.New) || !slices.Equal(got.Accessed, ww.Accessed) || !slices.Equal(got.Born, ww.Born) || !slices.Equal(got.Freed, ww.Freed) {
			t.Fatalf("counting reader: window %d differs", w)
		}
	}
}

// binFixCRCs returns a copy of data with the CRC of the header and of every
// complete block recomputed (docs/trace-format.md).
func binFixCRCs(data []byte) []byte {
	d := bytes.Clone(data)
	if len(d) < 16 {
		return d
	}
	h := int(binary.LittleEndian.Uint32(d[12:]))
	off := 16 + h
	if h > len(d) || off+4 > len(d) {
		return d
	}
	binary.LittleEndian.PutUint32(d[off:], crc32.Checksum(d[8:off], crc32.MakeTable(crc32.Castagnoli)))
	off += 4
	for off < len(d) {
		switch d[off] {
		case 'W':
			if off+17 > len(d) {
				return d
			}
			c := int(binary.LittleEndian.Uint32(d[off+9:]))
			if c > len(d)-off-17 {
				return d
			}
			crc := crc32.Checksum(d[off:off+13], crc32.MakeTable(crc32.Castagnoli))
			crc = crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), d[off+17:off+17+c])
			binary.LittleEndian.PutUint32(d[off+13:], crc)
			off += 17 + c
		case 'E':
			if off+9 > len(d) {
				return d
			}
			binary.LittleEndian.PutUint32(d[off+5:], crc32.Checksum(d[off:off+5], crc32.MakeTable(crc32.Castagnoli)))
			return d
		default:
			return d
		}
	}
	return d
}

func binCheckErr(t *testing.T, err error) {
	t.Helper()
	var ce *trace.CorruptError
	if !errors.As(err, &ce) || ce.File != "fuzz.mdkt" || ce.Msg == "" {
		t.Fatalf("error %v (%T) is not a *CorruptError naming the file", err, err)
	}
	if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("error %v wraps io.EOF", err)
	}
}
