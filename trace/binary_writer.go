package trace

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
)

// binaryWriter writes the binary format of docs/trace-format.md.
//
// It renumbers its input to the canonical form (new pages of a window sorted
// by (space, page), lists sorted by ID), so the file depends only on the
// event sets. remap maps input IDs to file IDs; it stays nil while the input
// is already canonical, which is the common case (every mdk reader and
// generator produces canonical windows), and then costs nothing.
type binaryWriter struct {
	w       io.Writer
	check   writeCheck // next window, pages announced so far
	h       Header
	remap   []uint32 // input ID -> file ID, nil while the identity
	order   []int    // scratch: new pages in canonical order
	rank    []uint32 // scratch: canonical rank of each new page
	scratch []uint32 // scratch: a remapped list
	raw     []byte   // the uncompressed payload
	block   []byte   // the whole block as written
	err     error    // sticky error
	closed  bool
}

// NewBinaryWriter returns a writer of the binary trace format (version
// [BinaryVersion], or [BinarySampledVersion] when h.Sample is set;
// docs/trace-format.md) to w, and writes the file header.
//
// Each WriteWindow issues exactly one Write of a complete block and keeps
// nothing buffered, so a file whose writer dies is readable up to the last
// window whose WriteWindow returned. Close writes the end block; it does not
// close w. When h.Windows is not 0 exactly that many windows must be written.
func NewBinaryWriter(w io.Writer, h Header) (Writer, error) {
	return newBinaryWriter(w, h, Partitioning{}, 0)
}

// NewPartitionedWriter returns a writer of a partitioned binary trace
// (version [BinaryPartitionedVersion], docs/trace-format.md) of p.Count
// partitions to w, and writes the file header. The partitions' hash uses
// p.Seed, or h.Sample's seed if the trace is sampled.
//
// The windows are written a segment at a time (up to 8 MiB of payload, or
// 1024 windows), each with one Write: a writer that dies loses the segment
// it was filling. Close writes the last one.
func NewPartitionedWriter(w io.Writer, h Header, p Partitioning) (Writer, error) {
	if !p.On() {
		return nil, fmt.Errorf("trace: binary writer: %d partitions: want 1 .. %d", p.Count, MaxPartitions)
	}
	return newBinaryWriter(w, h, p, BinaryPartitionedVersion)
}

// newBinaryWriter writes version 1 or 2, or if parts are on, the
// partitioned version partVersion (3, 4 or 5).
func newBinaryWriter(w io.Writer, h Header, parts Partitioning, partVersion uint32) (Writer, error) {
	if _, _, err := zstdCoders(); err != nil {
		return nil, fmt.Errorf("trace: binary writer: %w", err)
	}
	check, err := checkHeader("binary", h, math.MaxInt, maxWindows, maxPages)
	if err != nil {
		return nil, err
	}
	if len(h.Source) > maxHeaderBytes-64 {
		return nil, fmt.Errorf("trace: binary writer: source description of %d bytes is too long (max %d)", len(h.Source), maxHeaderBytes-64)
	}
	bw := &binaryWriter{w: w, h: h, check: check}
	fields := binary.AppendUvarint(nil, uint64(h.PageSize))
	fields = binary.AppendUvarint(fields, uint64(h.Window))
	fields = binary.AppendUvarint(fields, uint64(h.Windows))
	version := uint32(BinaryVersion)
	if !h.Sample.All() {
		if err := h.Sample.Validate(); err != nil {
			return nil, fmt.Errorf("trace: binary writer: %w", err)
		}
	}
	switch {
	case parts.On():
		r := uint64(SampleAll)
		if !h.Sample.All() {
			r = uint64(h.Sample.PPM)
		}
		if parts, err = parts.resolve(r, partVersion); err != nil {
			return nil, fmt.Errorf("trace: binary writer: %w", err)
		}
		version = partVersion
		fields = partitionFields(fields, h, parts, version)
	case !h.Sample.All():
		version = BinarySampledVersion
		fields = binary.AppendUvarint(fields, uint64(h.Sample.PPM))
		fields = binary.AppendUvarint(fields, h.Sample.Seed)
	}
	fields = binary.AppendUvarint(fields, uint64(len(h.Source)))
	fields = append(fields, h.Source...)

	buf := append([]byte(nil), BinaryMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, version)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(fields)))
	buf = append(buf, fields...)
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[len(BinaryMagic):], castagnoli))
	if parts.On() {
		return newPartWriter(w, h, parts, version, check, buf)
	}
	if _, err := w.Write(buf); err != nil {
		return nil, fmt.Errorf("trace: write binary header: %w", err)
	}
	return bw, nil
}

// fail makes err the writer's sticky error.
func (bw *binaryWriter) fail(err error) error {
	bw.err = err
	return err
}

func pageLess(a, b Page) bool { return a.Space < b.Space || a.Space == b.Space && a.Page < b.Page }

func comparePages(a, b Page) int {
	if c := cmp.Compare(a.Space, b.Space); c != 0 {
		return c
	}
	return cmp.Compare(a.Page, b.Page)
}

// WriteWindow encodes win as one block and writes it with one Write.
//
// The steps:
//  1. put the new pages in (space, page) order, extending remap if that
//     changed their IDs;
//  2. encode the new pages, then each list mapped through remap and sorted;
//  3. compress, checksum, write.
func (bw *binaryWriter) WriteWindow(win *Window) error {
	if bw.err != nil {
		return bw.err
	}
	if bw.closed {
		return bw.fail(bw.check.errorf("write after Close"))
	}
	if err := bw.check.start(win); err != nil {
		return bw.fail(err)
	}
	base, n := bw.check.pages, len(win.New)
	total := uint64(base + n)

	// Step 1.
	sorted := true
	for i := 1; i < n; i++ {
		if !pageLess(win.New[i-1], win.New[i]) {
			sorted = false
			break
		}
	}
	bw.order = bw.order[:0]
	for i := range n {
		bw.order = append(bw.order, i)
	}
	if !sorted {
		slices.SortStableFunc(bw.order, func(a, b int) int { return comparePages(win.New[a], win.New[b]) })
		for k := 1; k < n; k++ {
			if win.New[bw.order[k-1]] == win.New[bw.order[k]] {
				return bw.fail(bw.check.announcedTwice(win.New[bw.order[k]]))
			}
		}
		if bw.remap == nil {
			bw.remap = make([]uint32, base, max(2*base, 1024))
			for i := range bw.remap {
				bw.remap[i] = uint32(i)
			}
		}
		bw.rank = slices.Grow(bw.rank[:0], n)[:n]
		for k, i := range bw.order {
			bw.rank[i] = uint32(base + k)
		}
		bw.remap = append(bw.remap, bw.rank...)
	} else if bw.remap != nil {
		for i := range n {
			bw.remap = append(bw.remap, uint32(base+i))
		}
	}

	// Step 2.
	raw := binary.AppendUvarint(bw.raw[:0], uint64(n))
	var prev Page
	for _, i := range bw.order {
		raw = appendNewPage(raw, prev, win.New[i])
		prev = win.New[i]
	}
	for _, l := range [...]struct {
		kind Kind
		ids  []uint32
	}{{Access, win.Accessed}, {Birth, win.Born}, {Free, win.Freed}} {
		ids := l.ids
		if bw.remap != nil || !slices.IsSorted(ids) {
			bw.scratch = bw.scratch[:0]
			for _, id := range ids {
				if uint64(id) >= total {
					return bw.fail(bw.check.unannounced(l.kind, id, n))
				}
				if bw.remap != nil {
					id = bw.remap[id]
				}
				bw.scratch = append(bw.scratch, id)
			}
			slices.Sort(bw.scratch)
			ids = bw.scratch
		}
		raw = binary.AppendUvarint(raw, uint64(len(ids)))
		next := uint64(0)
		for _, id := range ids {
			v := uint64(id)
			if v < next {
				return bw.fail(bw.check.listedTwice(l.kind, bw.pageOf(win, id)))
			}
			if v >= total {
				return bw.fail(bw.check.unannounced(l.kind, id, n))
			}
			raw = binary.AppendUvarint(raw, v-next)
			next = v + 1
		}
	}
	bw.raw = raw
	if len(raw) > maxBlockBytes {
		return bw.fail(bw.check.errorf("payload of %d bytes exceeds the format's limit of %d", len(raw), maxBlockBytes))
	}

	// Step 3.
	enc, _, _ := zstdCoders()
	block := append(bw.block[:0], make([]byte, blockHeaderSize)...)
	block = enc.EncodeAll(raw, block)
	c := len(block) - blockHeaderSize
	if c > maxBlockBytes {
		return bw.fail(bw.check.errorf("compressed payload of %d bytes exceeds the format's limit of %d", c, maxBlockBytes))
	}
	block[0] = tagWindow
	binary.LittleEndian.PutUint32(block[1:], uint32(bw.check.next))
	binary.LittleEndian.PutUint32(block[5:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(block[9:], uint32(c))
	crc := crc32.Update(crc32.Checksum(block[:13], castagnoli), castagnoli, block[blockHeaderSize:])
	binary.LittleEndian.PutUint32(block[13:], crc)
	bw.block = block
	if _, err := bw.w.Write(block); err != nil {
		bw.err = fmt.Errorf("trace: write window %d: %w", bw.check.next, err)
		return bw.err
	}
	bw.check.done(n)
	return nil
}

// appendNewPage appends the new-page entry of p, which follows prev in
// (space, page) order, to raw.
func appendNewPage(raw []byte, prev, p Page) []byte {
	if p.Space != prev.Space {
		raw = binary.AppendUvarint(raw, uint64(p.Space-prev.Space))
		return binary.AppendUvarint(raw, p.Page)
	}
	raw = append(raw, 0)
	return binary.AppendUvarint(raw, p.Page-prev.Page)
}

// pageOf names a file ID for an error message, as well as it can.
func (bw *binaryWriter) pageOf(win *Window, fileID uint32) string {
	if i := int(fileID) - bw.check.pages; i >= 0 && i < len(bw.order) {
		return win.New[bw.order[i]].String()
	}
	return fmt.Sprintf("ID %d", fileID)
}

// Close writes the end block. It does not close the underlying writer.
func (bw *binaryWriter) Close() error {
	if bw.err != nil {
		return bw.err
	}
	if bw.closed {
		return nil
	}
	if err := bw.check.closing(); err != nil {
		return bw.fail(err)
	}
	var end [endBlockSize]byte
	end[0] = tagEnd
	binary.LittleEndian.PutUint32(end[1:], uint32(bw.check.next))
	binary.LittleEndian.PutUint32(end[5:], crc32.Checksum(end[:5], castagnoli))
	if _, err := bw.w.Write(end[:]); err != nil {
		bw.err = fmt.Errorf("trace: write end block: %w", err)
		return bw.err
	}
	bw.closed = true
	return nil
}
