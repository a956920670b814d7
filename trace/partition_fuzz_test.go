package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// FuzzPartitionedReader: any input gives windows and then io.EOF or a
// *CorruptError naming the file, by merged windows and partition by
// partition alike, never a panic; a file that reads cleanly writes back to
// one that reads the same.
func FuzzPartitionedReader(f *testing.F) {
	old, err := os.ReadFile("testdata/v3/example.mdkt") // written by the mdk of version 3
	if err != nil {
		f.Fatal(err)
	}
	f.Add(old)
	rng := testutil.Rand(12)
	for i := range 6 {
		tr := binRandom(rng)
		for _, v := range partVersions {
			data := encodePartsV(f, tr, []int{1, 3, 16}[i%3], uint64(i), v)
			f.Add(data)
			f.Add(data[:len(data)*2/3])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		partFuzzOne(t, data)
		if fixed := partFixCRCs(data); !bytes.Equal(fixed, data) {
			partFuzzOne(t, fixed)
		}
	})
}

func partFuzzOne(t *testing.T, data []byte) {
	r, err := trace.NewBinaryReader(bytes.NewReader(data), "fuzz.mdkt")
	if err != nil {
		binCheckErr(t, err)
		return
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		binCheckErr(t, err)
	} else {
		binCheckIDs(t, tr)
		again := binRead(t, encodeParts(t, tr, 3, 1))
		if len(again.Windows) != len(tr.Windows) || len(again.Pages) != len(tr.Pages) {
			t.Fatalf("rewritten file has %d windows and %d pages, want %d and %d", len(again.Windows), len(again.Pages), len(tr.Windows), len(tr.Pages))
		}
	}
	// Partition by partition.
	r, _ = trace.NewBinaryReader(bytes.NewReader(data), "fuzz.mdkt")
	pr, ok := r.(trace.PartitionedReader)
	if !ok {
		return
	}
	var win trace.Window
	for {
		_, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			binCheckErr(t, err)
			return
		}
		for range n {
			for p := range pr.Selected() {
				if err := pr.PartitionWindow(p, &win, p%2 == 0); err != nil {
					binCheckErr(t, err)
					return
				}
			}
		}
	}
}

// partFixCRCs returns a copy of data with the CRCs of the header and of
// every complete segment (index and payloads) and end block recomputed.
func partFixCRCs(data []byte) []byte {
	d := bytes.Clone(data)
	tab := crc32.MakeTable(crc32.Castagnoli)
	if len(d) < 16 {
		return d
	}
	h := int(binary.LittleEndian.Uint32(d[12:]))
	off := 16 + h
	if h > len(d) || off+4 > len(d) {
		return d
	}
	binary.LittleEndian.PutUint32(d[off:], crc32.Checksum(d[8:off], tab))
	off += 4
	for off < len(d) {
		switch d[off] {
		case 'S':
			if off+17 > len(d) {
				return d
			}
			x := int(binary.LittleEndian.Uint32(d[off+9:]))
			if x > len(d)-off-17 {
				return d
			}
			idx := d[off+17 : off+17+x]
			pay, short := off+17+x, false
			for i := 0; i < len(idx) && !short; {
				_, m := binary.Uvarint(idx[i:])
				if m <= 0 {
					break
				}
				l, m2 := binary.Uvarint(idx[i+m:])
				if m2 <= 0 || i+m+m2+4 > len(idx) {
					break
				}
				c := int(l >> 1)
				if c < 0 || c > len(d)-pay {
					short = true
					break
				}
				binary.LittleEndian.PutUint32(idx[i+m+m2:], crc32.Checksum(d[pay:pay+c], tab))
				pay += c
				i += m + m2 + 4
			}
			crc := crc32.Update(crc32.Checksum(d[off:off+13], tab), tab, idx)
			binary.LittleEndian.PutUint32(d[off+13:], crc)
			if short {
				return d
			}
			off = pay
		case 'E':
			if off+9 > len(d) {
				return d
			}
			binary.LittleEndian.PutUint32(d[off+5:], crc32.Checksum(d[off:off+5], tab))
			return d
		default:
			return d
		}
	}
	return d
}

// TestPartitionedLyingIndex: an index that claims more bytes than the file
// holds is reported at the segment's payload, naming its byte offset,
// without allocating what it claims (versions 3 and 4).
func TestPartitionedLyingIndex(t *testing.T) {
	for _, v := range partVersions {
		t.Run(fmt.Sprint("version ", v), func(t *testing.T) { partLyingIndex(t, v) })
	}
}

func partLyingIndex(t *testing.T, v uint32) {
	tr := binRandom(testutil.Rand(3))
	for len(tr.Windows) == 0 {
		tr = binRandom(testutil.Rand(uint64(len(tr.Pages) + 4)))
	}
	data := encodePartsV(t, tr, 2, 1, v)
	h := int(binary.LittleEndian.Uint32(data[12:]))
	seg := 16 + h + 4
	if data[seg] != 'S' {
		t.Fatalf("no segment at byte %d", seg)
	}
	// A new index: no new pages (version 3), partition 0 claims 2^27
	// compressed bytes, partition 1 none.
	var idx []byte
	if v == trace.BinaryPartitionedV3 {
		idx = binary.AppendUvarint(idx, 0)
		idx = binary.AppendUvarint(idx, 0)
		idx = binary.LittleEndian.AppendUint32(idx, 0)
	}
	idx = binary.AppendUvarint(idx, 1<<27)
	idx = binary.AppendUvarint(idx, 1<<28)
	idx = binary.LittleEndian.AppendUint32(idx, 0)
	idx = binary.AppendUvarint(idx, 0)
	idx = binary.AppendUvarint(idx, 0)
	idx = binary.LittleEndian.AppendUint32(idx, 0)
	forged := append([]byte(nil), data[:seg+17]...)
	binary.LittleEndian.PutUint32(forged[seg+9:], uint32(len(idx)))
	forged = append(forged, idx...)
	forged = append(forged, make([]byte, 1000)...)
	forged = partFixCRCs(forged)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := trace.NewBinaryReader(bytes.NewReader(forged), "lying.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	_, err = trace.ReadAll(r)
	runtime.ReadMemStats(&after)
	var ce *trace.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF) || ce.Offset != int64(seg+17+len(idx)) || !strings.Contains(err.Error(), "partition 0 payload") {
		t.Fatalf("got %v, want a truncation of partition 0's payload at byte offset %d", err, seg+17+len(idx))
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 8<<20 {
		t.Fatalf("reading the forged file allocated %d bytes", grown)
	}
}

// TestPartitionedDamageIsLocal: a damaged partition's payload stops the
// readers of that partition, at its byte offset, and not the readers of
// the others (versions 3 and 4).
func TestPartitionedDamageIsLocal(t *testing.T) {
	c := genTraces(t)[4]
	for _, v := range partVersions {
		t.Run(fmt.Sprint("version ", v), func(t *testing.T) { partDamageIsLocal(t, c, v) })
	}
}

func partDamageIsLocal(t *testing.T, c *trace.Trace, v uint32) {
	data := encodePartsV(t, c, 10, 1, v)
	h := int(binary.LittleEndian.Uint32(data[12:]))
	seg := 16 + h + 4
	x := int(binary.LittleEndian.Uint32(data[seg+9:]))
	// The offset of partition 5's payload (after the new pages' in
	// version 3).
	idx := data[seg+17 : seg+17+x]
	off := seg + 17 + x
	p := -1
	if v != trace.BinaryPartitionedV3 {
		p = 0
	}
	for i := 0; p < 5; p++ {
		_, m := binary.Uvarint(idx[i:])
		l, m2 := binary.Uvarint(idx[i+m:])
		off += int(l >> 1)
		i += m + m2 + 4
	}
	bad := bytes.Clone(data)
	bad[off+3] ^= 0x10
	r, _ := trace.NewBinaryReader(bytes.NewReader(bad), "bad.mdkt")
	_, err := trace.ReadAll(r)
	var ce *trace.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, trace.ErrChecksum) || ce.Offset != int64(off) {
		t.Fatalf("got %v, want a checksum error at byte offset %d", err, off)
	}
	r, _ = trace.NewBinaryReader(bytes.NewReader(bad), "bad.mdkt")
	r.(trace.PartitionedReader).SelectPartitions(5)
	if _, err := trace.ReadAll(r); err != nil {
		t.Fatalf("reading partitions 0..4: %v", err)
	}
}

// TestPartitionedWrongPartition: a version 4 file whose new pages are not
// in the partitions that hold them (here: the reader checks them with
// another seed) is an error naming the page and its partition, by Read and
// by PartitionWindow.
func TestPartitionedWrongPartition(t *testing.T) {
	tr := genTraces(t)[0]
	data := encodeParts(t, tr, 7, 1)
	for _, merged := range []bool{true, false} {
		r, err := trace.NewBinaryReader(bytes.NewReader(data), "wrong.mdkt")
		if err != nil {
			t.Fatal(err)
		}
		trace.Reseed(r, 2)
		if merged {
			_, err = trace.ReadAll(r)
		} else {
			err = readPartitionWindows(r.(trace.PartitionedReader))
		}
		var ce *trace.CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "is in partition") {
			t.Fatalf("merged %v: got %v, want a page in another partition", merged, err)
		}
	}
	// Reseeded with its own seed, it reads.
	r, err := trace.NewBinaryReader(bytes.NewReader(data), "right.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	trace.Reseed(r, 1)
	if err := readPartitionWindows(r.(trace.PartitionedReader)); err != nil {
		t.Fatal(err)
	}
}

// readPartitionWindows reads every window of every partition of pr.
func readPartitionWindows(pr trace.PartitionedReader) error {
	var w trace.Window
	for {
		_, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for range n {
			for p := range pr.Selected() {
				if err := pr.PartitionWindow(p, &w, false); err != nil {
					return err
				}
			}
		}
	}
}
