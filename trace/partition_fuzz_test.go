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
	"slices"
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
	for _, v := range []string{"v3", "v4"} { // written by the mdk of those versions
		old, err := os.ReadFile("testdata/" + v + "/example.mdkt")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(old)
	}
	rng := testutil.Rand(12)
	for i := range 6 {
		tr := binRandom(rng)
		for _, v := range partVersions {
			data := encodePartsV(f, tr, []int{1, 3, 16}[i%3], uint64(i), v)
			f.Add(data)
			f.Add(data[:len(data)*2/3])
		}
		// Version 5 with cuts of its own, some a digit wide.
		data := encodePartsP(f, tr, trace.Partitioning{Count: 8, Seed: 3, Cuts: randCuts(rng, 8, traceRate(tr))}, trace.BinaryPartitionedVersion)
		f.Add(data)
		f.Add(data[:len(data)/2])
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
	P := pr.Selected()
	whole, clean := fuzzPartWindows(t, pr, intsTo(P))
	// Two forks, of the even and the odd partitions: each gives what the
	// whole reader gave of its partitions, and where the whole reader
	// ended cleanly, all of it and a clean end.
	ar, err := trace.NewReaderAuto(bytes.NewReader(data), "fuzz.mdkt")
	if err != nil {
		t.Fatalf("NewBinaryReader read the header, NewReaderAuto: %v", err)
	}
	for half := range 2 {
		var parts []int
		for p := half; p < P; p += 2 {
			parts = append(parts, p)
		}
		fr, err := ar.(trace.PartitionForker).ForkPartitions(parts)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := fuzzPartWindows(t, fr, parts)
		for _, p := range parts {
			n := min(len(got[p]), len(whole[p]))
			if d := windowsDiffer(got[p][:n], whole[p][:n]); d >= 0 {
				t.Fatalf("fork of %v: partition %d's window %d differs from the whole reader's", parts, p, d)
			}
			if clean && (!ok || len(got[p]) != len(whole[p])) {
				t.Fatalf("fork of %v: partition %d: %d windows (clean end %v), the whole reader %d and a clean end", parts, p, len(got[p]), ok, len(whole[p]))
			}
		}
	}
}

// fuzzPartWindows reads partitions parts of pr to its end or its first
// error (checked: binCheckErr) and returns their windows, by partition,
// and whether it ended cleanly. Even partitions count their new pages.
func fuzzPartWindows(t *testing.T, pr trace.PartitionedReader, parts []int) (map[int][]trace.Window, bool) {
	out := map[int][]trace.Window{}
	for {
		_, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			return out, true
		}
		if err != nil {
			binCheckErr(t, err)
			return out, false
		}
		for range n {
			for _, p := range parts {
				var win trace.Window
				if err := pr.PartitionWindow(p, &win, p%2 == 0); err != nil {
					binCheckErr(t, err)
					return out, false
				}
				out[p] = append(out[p], win)
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

// TestPartitionedLyingCuts: version 5 headers whose cuts are not a
// partition of the trace's digits (a width of 0, past the rate, short of
// it, more partitions than the limit or than digits, truncated) are
// rejected at the header with an error saying what is wrong, even with
// their checksum right.
func TestPartitionedLyingCuts(t *testing.T) {
	// header fields: page size, window, windows, rate, seed, P, widths, source.
	fields := func(ppm uint64, p uint64, widths ...uint64) []byte {
		b := binary.AppendUvarint(nil, 4096)
		b = binary.AppendUvarint(b, 1e9)
		b = binary.AppendUvarint(b, 0)
		b = binary.AppendUvarint(b, ppm)
		b = binary.AppendUvarint(b, 1)
		b = binary.AppendUvarint(b, p)
		for _, w := range widths {
			b = binary.AppendUvarint(b, w)
		}
		return binary.AppendUvarint(b, 0)
	}
	file := func(f []byte) []byte {
		b := []byte(trace.BinaryMagic)
		b = binary.LittleEndian.AppendUint32(b, trace.BinaryPartitionedVersion)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[8:], crc32.MakeTable(crc32.Castagnoli)))
		return append(b, 'E', 0, 0, 0, 0, 0, 0, 0, 0)
	}
	many := make([]uint64, trace.MaxPartitions+1)
	for i := range many {
		many[i] = 1
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"width 0", file(fields(0, 3, 10, 0, 999990)), "partition 1 is empty"},
		{"past the rate", file(fields(0, 2, 10, 1000000)), "partition 1's width 1000000 takes the cuts past the trace's rate 1000000"},
		{"past a sample's rate", file(fields(10000, 2, 5000, 5001)), "past the trace's rate 10000"},
		{"short of the rate", file(fields(0, 2, 10, 20)), "end at digit 30, not at the trace's rate 1000000"},
		{"too many partitions", file(fields(0, trace.MaxPartitions+1, many...)), "4097 partitions: want 1 .. 4096"},
		{"more partitions than digits", file(fields(2, 3, 1, 1, 1)), "partition 2's width 1 takes the cuts past the trace's rate 2"},
		{"a width too many", file(fields(0, 2, 10, 999990, 5)), "source length"},
		{"a width short", file(fields(0, 3, 10, 999990)), "partition cuts"},
	} {
		_, err := trace.NewBinaryReader(bytes.NewReader(tc.data), "cuts.mdkt")
		var ce *trace.CorruptError
		if !errors.As(err, &ce) || ce.Offset != 16 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *CorruptError at byte offset 16 saying %q", tc.name, err, tc.want)
		}
	}
	// The same header with honest cuts reads.
	if _, err := trace.NewBinaryReader(bytes.NewReader(file(fields(0, 3, 10, 990, 999000))), "cuts.mdkt"); err != nil {
		t.Errorf("honest cuts: %v", err)
	}
}

// TestPartitionedCutsBitFlips: every bit flip and truncation of a version
// 5 file with cuts of its own (its checksums recomputed, so that the flip
// reaches the parser) gives windows then io.EOF or a *CorruptError, never
// a panic; a header that still reads has cuts that partition its digits.
func TestPartitionedCutsBitFlips(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 77))
	tr := binRandom(rng)
	data := encodePartsP(t, tr, trace.Partitioning{Count: 6, Seed: 5, Cuts: randCuts(rng, 6, traceRate(tr))}, trace.BinaryPartitionedVersion)
	h := int(binary.LittleEndian.Uint32(data[12:]))
	end := min(len(data), 16+h+4+200) // the header and the first segment's index
	for i := 8; i < end; i++ {
		for bit := range 8 {
			bad := bytes.Clone(data)
			bad[i] ^= 1 << bit
			bad = partFixCRCs(bad)
			partFuzzOne(t, bad)
			if r, err := trace.NewBinaryReader(bytes.NewReader(bad), "flip.mdkt"); err == nil {
				if pr, ok := r.(trace.PartitionedReader); ok {
					c := pr.Partitioning().Cuts
					if len(c) != pr.Partitioning().Count+1 || c[0] != 0 || !slices.IsSorted(c) || len(slices.Compact(slices.Clone(c))) != len(c) {
						t.Fatalf("flip byte %d bit %d: cuts %v read", i, bit, c)
					}
				}
			}
		}
	}
	for n := range len(data) {
		partFuzzOne(t, data[:n])
	}
}
