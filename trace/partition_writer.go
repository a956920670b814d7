package trace

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// The partitioned binary formats, versions 3 to 5 (docs/trace-format.md):
// the windows come in segments, and a segment holds one payload per
// partition, each compressed alone, behind an index of their sizes.
// Version 3 stores a window's new pages once, in a payload of their own
// before the partitions'; version 4 stores each partition's new pages in
// its own payload, so that a reader of some partitions reads only theirs;
// version 5 is version 4 with the partitions' cuts in the header, so that
// they need not be equal.

const (
	// BinaryPartitionedVersion is the version of a partitioned binary trace
	// as mdk writes it: version 4 with unequal partitions, their cuts in
	// the header.
	BinaryPartitionedVersion = 5
	// binaryPartitionedV4 stores each partition's new pages in its own
	// payload, its partitions equal; mdk reads it.
	binaryPartitionedV4 = 4
	// binaryPartitionedV3 is the first partitioned version, whose new pages
	// are stored once for all partitions; mdk reads it.
	binaryPartitionedV3 = 3

	tagSegment        = 'S'
	segmentHeaderSize = 17 // tag, first window, windows, index length, crc
	// segmentBytes is the raw payload at which the writer closes a
	// segment; maxSegmentWindows the most windows it puts in one.
	segmentBytes      = 8 << 20
	maxSegmentWindows = 1 << 10
	// indexEntryMax is the most bytes of one partition's index entry.
	indexEntryMax = 10 + 10 + 4
)

// partWriter writes a partitioned binary trace. Like the version 1 writer
// it renumbers its input to the canonical form: a window's new pages sorted
// by (space, page) (once for all partitions in version 3, each partition's
// in its own payload in version 4), and each partition's lists sorted by the
// partition's own dense IDs, which number its pages in that order. It keeps the windows of the current segment, at most
// segmentBytes of payload, and writes each segment with one Write.
type partWriter struct {
	w       io.Writer
	check   writeCheck
	pt      partitioner
	perPart bool // versions 4 and 5: each partition's new pages in its payload
	parts   int
	part    []uint16 // input ID -> partition
	local   []uint32 // input ID -> ID in its partition
	npages  []uint32 // pages of each partition so far
	pages   []byte   // the new pages' payload of the current segment
	raw     [][]byte // each partition's payload of the current segment
	first   int      // the segment's first window
	n       int      // and its windows
	size    int      // and their payload bytes
	order   []int
	newOf   [][]Page // version 4: a window's new pages by partition
	lists   [][]uint32
	block   []byte
	err     error
	closed  bool
}

func newPartWriter(w io.Writer, h Header, parts Partitioning, version uint32, check writeCheck, header []byte) (*partWriter, error) {
	if _, err := w.Write(header); err != nil {
		return nil, fmt.Errorf("trace: write binary header: %w", err)
	}
	P := parts.Count
	pw := &partWriter{
		w: w, check: check, pt: newPartitioner(parts, h.Sample), parts: P,
		perPart: version >= binaryPartitionedV4,
		npages:  make([]uint32, P), raw: make([][]byte, P), lists: make([][]uint32, P),
	}
	if pw.perPart {
		pw.newOf = make([][]Page, P)
	}
	return pw, nil
}

// partitionFields are the header fields of versions 3 to 5 between the
// window count and the source: the sample's rate (0: a whole trace), the
// seed, the partition count, and in version 5 each partition's width (its
// cuts' difference).
func partitionFields(fields []byte, h Header, parts Partitioning, version uint32) []byte {
	seed := parts.Seed
	ppm := uint64(0)
	if !h.Sample.All() {
		ppm, seed = uint64(h.Sample.PPM), h.Sample.Seed
	}
	fields = binary.AppendUvarint(fields, ppm)
	fields = binary.AppendUvarint(fields, seed)
	fields = binary.AppendUvarint(fields, uint64(parts.Count))
	if version >= BinaryPartitionedVersion {
		for p := range parts.Count {
			fields = binary.AppendUvarint(fields, parts.Width(p))
		}
	}
	return fields
}

func (pw *partWriter) fail(err error) error {
	pw.err = err
	return err
}

// WriteWindow splits win by partition and adds it to the segment, which it
// writes first if win would make it too large.
func (pw *partWriter) WriteWindow(win *Window) error {
	if pw.err != nil {
		return pw.err
	}
	if pw.closed {
		return pw.fail(pw.check.errorf("write after Close"))
	}
	if err := pw.check.start(win); err != nil {
		return pw.fail(err)
	}
	base, n := pw.check.pages, len(win.New)
	total := uint64(base + n)

	// New pages in (space, page) order, each given its partition's next ID.
	pw.order = pw.order[:0]
	for i := range n {
		pw.order = append(pw.order, i)
	}
	slices.SortStableFunc(pw.order, func(a, b int) int { return comparePages(win.New[a], win.New[b]) })
	for k := 1; k < n; k++ {
		if win.New[pw.order[k-1]] == win.New[pw.order[k]] {
			return pw.fail(pw.check.announcedTwice(win.New[pw.order[k]]))
		}
	}
	pw.part = slices.Grow(pw.part, n)[:base+n]
	pw.local = slices.Grow(pw.local, n)[:base+n]
	start := make([]int, pw.parts)
	for p := range pw.raw {
		start[p] = len(pw.raw[p])
	}
	pagesAt := len(pw.pages)
	var raw []byte
	if !pw.perPart {
		raw = binary.AppendUvarint(pw.pages, uint64(n))
	}
	var prev Page
	for _, i := range pw.order {
		pg := win.New[i]
		p := pw.pt.of(pg)
		if p < 0 {
			return pw.fail(pw.check.errorf("page %v is not in the trace's sample", pg))
		}
		pw.part[base+i], pw.local[base+i] = uint16(p), pw.npages[p]
		pw.npages[p]++
		if pw.perPart {
			pw.newOf[p] = append(pw.newOf[p], pg)
			continue
		}
		raw = appendNewPage(raw, prev, pg)
		prev = pg
	}
	if pw.perPart {
		// Each partition's window starts with its new pages.
		for p, pages := range pw.newOf {
			raw := binary.AppendUvarint(pw.raw[p], uint64(len(pages)))
			prev := Page{}
			for _, pg := range pages {
				raw = appendNewPage(raw, prev, pg)
				prev = pg
			}
			pw.raw[p], pw.newOf[p] = raw, pages[:0]
		}
	} else {
		pw.pages = raw
	}
	for _, l := range [...]struct {
		kind Kind
		ids  []uint32
	}{{Access, win.Accessed}, {Birth, win.Born}, {Free, win.Freed}} {
		for p := range pw.lists {
			pw.lists[p] = pw.lists[p][:0]
		}
		for _, id := range l.ids {
			if uint64(id) >= total {
				return pw.fail(pw.check.unannounced(l.kind, id, n))
			}
			p := pw.part[id]
			pw.lists[p] = append(pw.lists[p], pw.local[id])
		}
		for p, ids := range pw.lists {
			if !slices.IsSorted(ids) {
				slices.Sort(ids)
			}
			raw := binary.AppendUvarint(pw.raw[p], uint64(len(ids)))
			next := uint64(0)
			for _, id := range ids {
				v := uint64(id)
				if v < next {
					return pw.fail(pw.check.listedTwice(l.kind, pw.pageOf(win, base, uint16(p), id)))
				}
				raw = binary.AppendUvarint(raw, v-next)
				next = v + 1
			}
			pw.raw[p] = raw
		}
	}
	added := len(pw.pages) - pagesAt
	for p := range pw.raw {
		added += len(pw.raw[p]) - start[p]
	}
	if added > maxBlockBytes {
		return pw.fail(pw.check.errorf("payload of %d bytes exceeds the format's limit of %d", added, maxBlockBytes))
	}
	if pw.n > 0 && pw.size+added > maxBlockBytes {
		// The window does not fit: write the segment without it.
		tail := make([][]byte, pw.parts)
		for p := range pw.raw {
			tail[p] = slices.Clone(pw.raw[p][start[p]:])
			pw.raw[p] = pw.raw[p][:start[p]]
		}
		ptail := slices.Clone(pw.pages[pagesAt:])
		pw.pages = pw.pages[:pagesAt]
		if err := pw.flush(); err != nil {
			return err
		}
		for p := range pw.raw {
			pw.raw[p] = append(pw.raw[p][:0], tail[p]...)
		}
		pw.pages = append(pw.pages[:0], ptail...)
	}
	if pw.n == 0 {
		pw.first = pw.check.next
	}
	pw.n++
	pw.size += added
	pw.check.done(n)
	if pw.size >= segmentBytes || pw.n >= maxSegmentWindows {
		return pw.flush()
	}
	return nil
}

// pageOf names the page of partition p's ID for an error message.
func (pw *partWriter) pageOf(win *Window, base int, p uint16, id uint32) string {
	for i, pg := range win.New {
		if pw.part[base+i] == p && pw.local[base+i] == id {
			return pg.String()
		}
	}
	return fmt.Sprintf("ID %d of partition %d", id, p)
}

// flush compresses and writes the current segment.
func (pw *partWriter) flush() error {
	if pw.n == 0 {
		return nil
	}
	enc, _, _ := zstdCoders()
	index := make([]byte, 0, (pw.parts+1)*8)
	var payloads []byte
	from := -1 // version 3: the new pages' payload first
	if pw.perPart {
		from = 0
	}
	for i := from; i < pw.parts; i++ {
		raw := pw.pages
		if i >= 0 {
			raw = pw.raw[i]
		}
		at := len(payloads)
		payloads = enc.EncodeAll(raw, payloads)
		c, stored := len(payloads)-at, uint64(0)
		if c >= len(raw) {
			payloads = append(payloads[:at], raw...)
			c, stored = len(raw), 1
		}
		index = binary.AppendUvarint(index, uint64(len(raw)))
		index = binary.AppendUvarint(index, uint64(c)<<1|stored)
		index = binary.LittleEndian.AppendUint32(index, crc32.Checksum(payloads[at:], castagnoli))
	}
	if len(payloads) > maxBlockBytes {
		return pw.fail(pw.check.errorf("compressed segment of %d bytes exceeds the format's limit of %d", len(payloads), maxBlockBytes))
	}
	b := append(pw.block[:0], tagSegment)
	b = binary.LittleEndian.AppendUint32(b, uint32(pw.first))
	b = binary.LittleEndian.AppendUint32(b, uint32(pw.n))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(index)))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, index...)
	crc := crc32.Update(crc32.Checksum(b[:13], castagnoli), castagnoli, index)
	binary.LittleEndian.PutUint32(b[13:], crc)
	b = append(b, payloads...)
	pw.block = b
	if _, err := pw.w.Write(b); err != nil {
		return pw.fail(fmt.Errorf("trace: write windows %d..%d: %w", pw.first, pw.first+pw.n-1, err))
	}
	for p := range pw.raw {
		pw.raw[p] = pw.raw[p][:0]
	}
	pw.pages = pw.pages[:0]
	pw.n, pw.size = 0, 0
	return nil
}

// Flush writes the windows written so far as a segment now, so that a
// writer killed afterwards leaves them readable (recorders call it after
// each window; the segment then holds one window). The trace it writes is
// the same trace, in more segments.
func (pw *partWriter) Flush() error {
	if pw.err != nil {
		return pw.err
	}
	return pw.flush()
}

// Close writes the last segment and the end block.
func (pw *partWriter) Close() error {
	if pw.err != nil {
		return pw.err
	}
	if pw.closed {
		return nil
	}
	if err := pw.check.closing(); err != nil {
		return pw.fail(err)
	}
	if err := pw.flush(); err != nil {
		return err
	}
	var end [endBlockSize]byte
	end[0] = tagEnd
	binary.LittleEndian.PutUint32(end[1:], uint32(pw.check.next))
	binary.LittleEndian.PutUint32(end[5:], crc32.Checksum(end[:5], castagnoli))
	if _, err := pw.w.Write(end[:]); err != nil {
		return pw.fail(fmt.Errorf("trace: write end block: %w", err))
	}
	pw.closed = true
	return nil
}
