package trace

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
)

// PartitionedReader is implemented by the reader of a partitioned binary
// trace (versions 3 to 5). Besides the merged windows of Read (every selected
// partition's pages, with dense IDs of their own), it gives each
// partition's windows apart, for engines that work per partition: call
// NextSegment, then PartitionWindow for each window of the segment and each
// selected partition. Use one way or the other, not both.
type PartitionedReader interface {
	Reader
	// SelectPartitions makes the reader read the first n partitions only,
	// skipping the others' bytes without decoding them. Call it before the
	// first Read or NextSegment.
	SelectPartitions(n int)
	// SelectPartitionRange makes the reader read partitions lo .. hi-1
	// only (clamped to the trace's), skipping the others' bytes without
	// decoding them: a worker that walks some of a trace's partitions
	// (mpc.WalkPartitions). Call it before the first Read or NextSegment.
	SelectPartitionRange(lo, hi int)
	// Selected returns the number of partitions read.
	Selected() int
	// Partitioning returns the trace's partitions: their number, the
	// hash's seed (a sampled trace's sample seed) and their cuts (versions
	// 3 and 4: equal partitions).
	Partitioning() Partitioning
	// NextSegment reads the next segment's index, its new pages and the
	// selected partitions' payloads, and returns its first window and
	// number of windows, or io.EOF after the last.
	NextSegment() (first, n int, err error)
	// PartitionWindow decodes partition p's next window of the segment
	// into win, in p's own dense IDs (its pages numbered in order of first
	// appearance in p), counting its new pages in Unlisted if count. Calls
	// for different partitions may run concurrently.
	PartitionWindow(p int, win *Window, count bool) error
}

// partReader reads a partitioned binary trace.
type partReader struct {
	br      *binaryReader // the file, its header and the next window to return
	pt      partitioner
	perPart bool        // versions 4 and 5: each partition's new pages in its payload
	sel     []int       // the partitions read, in increasing order
	mask    []bool      // by partition: read
	nsel    int         // 1 + the last of sel (0 if none)
	pages   partState   // version 3: the new pages' payload
	parts   []partState // the partitions'
	// The current segment.
	first, n, k int
	// Version 3, unless the reader counts new pages (CountNew): the
	// segment's new pages of the selected partitions, window by window, and
	// the partition of each: window k's are segPages[winStart[k]:winStart[k+1]].
	segPages []Page
	segPart  []uint16
	winStart []int
	cnt      []uint32 // scratch: a window's new pages by partition
	touched  []int    // the partitions with cnt > 0
	// The merged windows.
	l2g       [][]uint32 // per partition: its ID -> merged ID
	npages    uint64     // pages of the selected partitions
	npagesAll uint64     // pages of all partitions
	discard   bool
	count     bool
	double    bool
	wins      [2]Window
	cur       int
	scratch   Window
	psc       []Window // version 4: each selected partition's window
	heads     []int    // version 4: partitions in a merge of their new pages
	err       error
	// The file, for ForkPartitions: nil if not one that can be read at
	// an offset; the trace is its atSize bytes from atStart.
	at              io.ReaderAt
	atStart, atSize int64
	// A fork (ForkPartitions) reads a payload when its first window is
	// decoded, into comp, not every selected payload at NextSegment: one
	// partition's compressed bytes in memory, not the segment's.
	lazy bool
	comp []byte
}

// partState is one payload of the current segment.
type partState struct {
	u, c   int
	stored bool
	crc    uint32
	off    int64 // the payload's byte offset in the file
	comp   []byte
	raw    []byte
	d      decoder
	ready  bool      // comp checked and decompressed into raw
	done   int       // windows of the segment decoded
	npages uint64    // the partition's pages so far
	err    error     // sticky, for PartitionWindow
	idx    []int32   // version 3: the segment's pages in this partition (into segPages)
	ic     int       // the next of idx
	runs   []newRun  // version 3: the segment's windows with new pages in this partition
	rc     int       // the next of runs
	ni     int       // version 4: the next of the merged window's new pages (psc's New)
	span   digitSpan // the partition's digits: its new pages' check
}

// newRun is a window of the segment (k) and how many of its new pages are
// in a partition.
type newRun struct{ k, n uint32 }

func newPartReader(br *binaryReader) *partReader {
	P := br.parts.Count
	pr := &partReader{br: br, pt: newPartitioner(br.parts, br.hdr.Sample), perPart: br.version >= binaryPartitionedV4}
	pr.parts = make([]partState, P)
	pr.selectSet(func(int) bool { return true })
	for p := range pr.parts {
		pr.parts[p].span = pr.pt.span(p)
	}
	pr.l2g = make([][]uint32, P)
	return pr
}

func (pr *partReader) Header() Header { return pr.br.hdr }
func (pr *partReader) Pages() []Page  { return pr.br.pages }

// DiscardPages stops keeping the merged page table.
func (pr *partReader) DiscardPages() { pr.discard = true }

// CountNew counts the new pages of the merged windows, and of each
// partition's, instead of listing them, and keeps no table of a segment's
// pages.
func (pr *partReader) CountNew() { pr.count, pr.discard = true, true }

// DoubleBuffer makes Read alternate between two windows.
func (pr *partReader) DoubleBuffer() { pr.double = true }

func (pr *partReader) SelectPartitions(n int) { pr.SelectPartitionRange(0, n) }
func (pr *partReader) Selected() int          { return len(pr.sel) }

func (pr *partReader) SelectPartitionRange(lo, hi int) {
	hi = max(0, min(hi, len(pr.parts)))
	lo = max(0, min(lo, hi))
	pr.selectSet(func(p int) bool { return p >= lo && p < hi })
}

// selectSet makes the reader read the partitions p for which in(p).
func (pr *partReader) selectSet(in func(p int) bool) {
	pr.sel, pr.nsel = pr.sel[:0], 0
	if len(pr.mask) != len(pr.parts) {
		pr.mask = make([]bool, len(pr.parts))
	}
	for p := range pr.parts {
		pr.mask[p] = in(p)
		if pr.mask[p] {
			pr.sel = append(pr.sel, p)
			pr.nsel = p + 1
		}
	}
}

// selected reports whether partition p is read.
func (pr *partReader) selected(p int) bool { return p >= 0 && p < len(pr.mask) && pr.mask[p] }

func (pr *partReader) Partitioning() Partitioning { return pr.br.parts }

// partList formats a list of partitions for an error: its runs, as
// "0..3, 5, 7..8", or "none".
func partList(ps []int) string {
	if len(ps) == 0 {
		return "none"
	}
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j == i {
			fmt.Fprintf(&b, "%d", ps[i])
		} else {
			fmt.Fprintf(&b, "%d..%d", ps[i], ps[j])
		}
		i = j + 1
	}
	return b.String()
}

func (pr *partReader) corrupt(off int64, last int, cause error, format string, args ...any) *CorruptError {
	return &CorruptError{File: pr.br.name, Offset: off, LastWindow: last, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// NextSegment reads the next block: a segment's index and payloads, or the
// end block.
func (pr *partReader) NextSegment() (int, int, error) {
	if pr.err != nil {
		return 0, 0, pr.err
	}
	first, n, err := pr.nextSegment()
	if err != nil {
		pr.err = err
		return 0, 0, err
	}
	return first, n, nil
}

func (pr *partReader) nextSegment() (int, int, error) {
	br := pr.br
	if pr.n > 0 {
		// Every selected partition must have been read to the segment's end.
		for _, p := range pr.sel {
			ps := &pr.parts[p]
			if ps.done != pr.n {
				return 0, 0, fmt.Errorf("trace: %s: partition %d: %d of the segment's %d windows read before the next segment", br.name, p, ps.done, pr.n)
			}
			if ps.d.i != len(ps.d.p) {
				return 0, 0, pr.corrupt(ps.off, pr.first+pr.n-2, nil, "partition %d payload: %d unexpected bytes after window %d", p, len(ps.d.p)-ps.d.i, pr.first+pr.n-1)
			}
		}
		br.next = pr.first + pr.n
	}
	pr.n, pr.k = 0, 0
	start := br.off
	if err := br.readTag(start); err != nil {
		return 0, 0, err
	}
	switch br.small[0] {
	case tagEnd:
		return 0, 0, br.readEnd(start)
	case tagSegment:
	default:
		return 0, 0, br.corrupt(start, nil, "bad block tag 0x%02x, want 'S' (a segment from window %d) or 'E' (end)", br.small[0], br.next)
	}
	if err := br.readFull(br.small[1:segmentHeaderSize], start, " segment header"); err != nil {
		return 0, 0, err
	}
	first := binary.LittleEndian.Uint32(br.small[1:])
	n := binary.LittleEndian.Uint32(br.small[5:])
	x := binary.LittleEndian.Uint32(br.small[9:])
	P := len(pr.parts)
	from := -1 // version 3: the new pages' entry first
	if pr.perPart {
		from = 0
	}
	entries := int64(P - from)
	switch {
	case int64(first) != int64(br.next):
		return 0, 0, br.corrupt(start, nil, "segment from window %d where window %d was expected", first, br.next)
	case n < 1:
		return 0, 0, br.corrupt(start, nil, "segment of window %d has no windows", first)
	case uint64(first)+uint64(n) > maxWindows:
		return 0, 0, br.corrupt(start, nil, "segment of %d windows from window %d exceeds the limit of %d windows", n, first, uint64(maxWindows))
	case br.hdr.Windows != 0 && int64(first)+int64(n) > int64(br.hdr.Windows):
		return 0, 0, br.corrupt(start, nil, "segment of windows %d..%d beyond the %d windows the header declares", first, int64(first)+int64(n)-1, br.hdr.Windows)
	case int64(x) > entries*indexEntryMax:
		return 0, 0, br.corrupt(start, nil, "segment index of %d bytes exceeds the %d that %d partitions can need", x, entries*indexEntryMax, P)
	}
	index, err := br.readGrowing(nil, int(x), start, " segment index")
	if err != nil {
		return 0, 0, err
	}
	crc := crc32.Update(crc32.Checksum(br.small[:13], castagnoli), castagnoli, index)
	if got := binary.LittleEndian.Uint32(br.small[13:]); got != crc {
		return 0, 0, br.corrupt(start, ErrChecksum, "segment of window %d: index checksum mismatch: stored %08x, computed %08x", first, got, crc)
	}
	d := decoder{p: index}
	var sumU, sumC uint64
	off := br.off
	for i := from; i < P; i++ {
		what := "the new pages"
		ps := &pr.pages
		if i >= 0 {
			what, ps = fmt.Sprintf("partition %d", i), &pr.parts[i]
		}
		u := d.uvarint()
		l := d.uvarint()
		if d.bad == "" && d.i+4 > len(d.p) {
			d.bad = "truncated"
		}
		if d.bad != "" {
			return 0, 0, br.corrupt(start, nil, "segment of window %d: index entry of %s: %s", first, what, d.bad)
		}
		c, stored := l>>1, l&1 == 1
		sumU += u
		sumC += c
		switch {
		case u > maxBlockBytes || c > maxBlockBytes || sumU > maxBlockBytes || sumC > maxBlockBytes:
			return 0, 0, br.corrupt(start, nil, "segment of window %d: %s: sizes %d (raw) / %d (stored) take the segment past the limit of %d bytes", first, what, u, c, maxBlockBytes)
		case stored && c != u:
			return 0, 0, br.corrupt(start, nil, "segment of window %d: %s stored uncompressed in %d bytes, but its payload is %d", first, what, c, u)
		}
		ps.u, ps.c, ps.stored, ps.off = int(u), int(c), stored, off
		ps.crc = binary.LittleEndian.Uint32(d.p[d.i:])
		ps.ready, ps.done, ps.err, ps.idx, ps.ic, ps.runs, ps.rc = false, 0, nil, ps.idx[:0], 0, ps.runs[:0], 0
		d.i += 4
		off += int64(c)
	}
	if d.i != len(d.p) {
		return 0, 0, br.corrupt(start, nil, "segment of window %d: %d unexpected bytes after the index", first, len(d.p)-d.i)
	}
	// The payloads: the new pages (version 3) and the selected partitions
	// read, the others skipped.
	if !pr.perPart {
		if pr.pages.comp, err = br.readGrowing(pr.pages.comp, pr.pages.c, pr.pages.off, " new pages' payload"); err != nil {
			return 0, 0, err
		}
	}
	for p := range pr.parts {
		ps := &pr.parts[p]
		if pr.selected(p) && !pr.lazy {
			if ps.comp, err = br.readGrowing(ps.comp, ps.c, ps.off, fmt.Sprintf(" partition %d payload", p)); err != nil {
				return 0, 0, err
			}
			continue
		}
		// Not read, or (a fork) read when its first window is decoded:
		// the bytes must be in the file.
		if err := br.skip(int64(ps.c), ps.off, fmt.Sprintf(" partition %d payload", p)); err != nil {
			return 0, 0, err
		}
	}
	pr.first, pr.n = int(first), int(n)
	if pr.perPart {
		return pr.first, pr.n, nil
	}
	if err := pr.readPages(); err != nil {
		pr.n = 0
		return 0, 0, err
	}
	return pr.first, pr.n, nil
}

// skipBufSize is the read buffer of a reader once it has sought past a
// partition (binaryReader.skip): a segment's header and index are read
// through it, its payloads straight into theirs, so what it reads past
// the wanted bytes, at most its size a segment, is all the waste.
const skipBufSize = 512

// skip passes over n bytes of the file, which must be there: it seeks past
// them when the file can (br.seeker), else reads and drops them.
func (br *binaryReader) skip(n, start int64, what string) error {
	if b, ok := br.r.(*bufio.Reader); ok && br.seeker != nil && n > int64(b.Buffered()) {
		if br.size < 0 {
			cur, err1 := br.seeker.Seek(0, io.SeekCurrent)
			end, err2 := br.seeker.Seek(0, io.SeekEnd)
			_, err3 := br.seeker.Seek(cur, io.SeekStart)
			if err1 != nil || err2 != nil || err3 != nil {
				br.seeker = nil // a pipe: read through
				return br.skip(n, start, what)
			}
			br.size = end - cur + br.off + int64(b.Buffered())
		}
		pos := br.off + n
		if pos > br.size {
			return br.corrupt(start, io.ErrUnexpectedEOF, "truncated window %d%s: file ends at byte offset %d", br.next, what, br.size)
		}
		if _, err := br.seeker.Seek(pos-br.off-int64(b.Buffered()), io.SeekCurrent); err != nil {
			return br.corrupt(start, err, "seek window %d%s: %v", br.next, what, err)
		}
		// A reader that seeks reads some partitions of each segment (a
		// sample, a fleet's piece): the segment's index and its
		// partitions' payloads, then a seek past the others. Refilled
		// to 64 KiB after each seek, the buffer would read that far past
		// the wanted bytes in every segment (a 1% sample of the benchmark
		// trace read 1.9% of its bytes), so reading goes on through a
		// small one; payloads larger than it bypass it (bufio reads them
		// straight into their buffers).
		if br.skipBuf == nil {
			br.skipBuf = bufio.NewReaderSize(br.seeker, skipBufSize)
		} else {
			br.skipBuf.Reset(br.seeker)
		}
		br.r = br.skipBuf
		br.off = pos
		return nil
	}
	m, err := io.CopyN(io.Discard, br.r, n)
	br.off += m
	if m == n {
		return nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return br.corrupt(start, err, "read window %d%s: %v", br.next, what, err)
	}
	return br.corrupt(start, io.ErrUnexpectedEOF, "truncated window %d%s: file ends at byte offset %d", br.next, what, br.off)
}

// readPages decodes version 3's new pages of the segment and finds their partitions:
// each partition's count of them in each window (runs), and unless the
// reader counts new pages, the pages themselves.
func (pr *partReader) readPages() error {
	ps := &pr.pages
	if err := pr.ready(ps, "the new pages' payload"); err != nil {
		return err
	}
	keep := !pr.count
	pr.segPages, pr.segPart, pr.winStart = pr.segPages[:0], pr.segPart[:0], append(pr.winStart[:0], 0)
	if len(pr.cnt) != len(pr.parts) {
		pr.cnt = make([]uint32, len(pr.parts))
	}
	var w Window
	each := func(pg Page) string {
		p := pr.pt.of(pg)
		if p < 0 {
			return fmt.Sprintf("page %v is not in the trace's sample", pg)
		}
		if pr.cnt[p] == 0 {
			pr.touched = append(pr.touched, p)
		}
		pr.cnt[p]++
		if keep && pr.selected(p) {
			pr.parts[p].idx = append(pr.parts[p].idx, int32(len(pr.segPages)))
			pr.segPages = append(pr.segPages, pg)
			pr.segPart = append(pr.segPart, uint16(p))
		}
		return ""
	}
	total := pr.npagesAll
	for k := range pr.n {
		n, msg := decodeNew(&ps.d, &w, total, true, each, nil)
		if msg != "" {
			return pr.corrupt(ps.off, pr.first+k-1, nil, "window %d new pages: %s", pr.first+k, msg)
		}
		total += n
		for _, p := range pr.touched {
			if pr.selected(p) {
				pr.parts[p].runs = append(pr.parts[p].runs, newRun{uint32(k), pr.cnt[p]})
			}
			pr.cnt[p] = 0
		}
		pr.touched = pr.touched[:0]
		if keep {
			pr.winStart = append(pr.winStart, len(pr.segPages))
		}
	}
	if ps.d.i != len(ps.d.p) {
		return pr.corrupt(ps.off, pr.first-1, nil, "the new pages' payload of windows %d..%d: %d unexpected bytes after them", pr.first, pr.first+pr.n-1, len(ps.d.p)-ps.d.i)
	}
	pr.npagesAll = total
	return nil
}

// ready checks a payload of the segment and decompresses it.
func (pr *partReader) ready(ps *partState, what string) error {
	if ps.ready {
		return nil
	}
	last := pr.first + ps.done - 1
	if pr.lazy && ps != &pr.pages {
		// A fork's payload, read now into the fork's one buffer.
		pr.comp = slices.Grow(pr.comp[:0], ps.c)[:ps.c]
		if _, err := pr.at.ReadAt(pr.comp, pr.atStart+ps.off); err != nil {
			return pr.corrupt(ps.off, last, err, "read %s of windows %d..%d: %v", what, pr.first, pr.first+pr.n-1, err)
		}
		ps.comp = pr.comp
		defer func() { ps.comp = nil }()
	}
	if got := crc32.Checksum(ps.comp, castagnoli); got != ps.crc {
		return pr.corrupt(ps.off, last, ErrChecksum, "%s of windows %d..%d: checksum mismatch: stored %08x, computed %08x", what, pr.first, pr.first+pr.n-1, ps.crc, got)
	}
	if ps.stored {
		ps.raw = append(ps.raw[:0], ps.comp...)
	} else {
		_, dec, zerr := zstdCoders()
		if zerr != nil {
			return pr.corrupt(ps.off, last, zerr, "zstd: %v", zerr)
		}
		raw, err := dec.DecodeAll(ps.comp, ps.raw[:0])
		if err != nil {
			return pr.corrupt(ps.off, last, err, "%s of windows %d..%d does not decompress: %v", what, pr.first, pr.first+pr.n-1, err)
		}
		ps.raw = raw
		if len(raw) != ps.u {
			return pr.corrupt(ps.off, last, nil, "%s of windows %d..%d decompresses to %d bytes, the index says %d", what, pr.first, pr.first+pr.n-1, len(raw), ps.u)
		}
	}
	ps.d = decoder{p: ps.raw}
	ps.ready = true
	return nil
}

// PartitionWindow decodes partition p's next window of the segment.
func (pr *partReader) PartitionWindow(p int, win *Window, count bool) error {
	if !pr.selected(p) {
		return fmt.Errorf("trace: %s: partition %d not selected (%s of %d)", pr.br.name, p, partList(pr.sel), len(pr.parts))
	}
	ps := &pr.parts[p]
	if ps.err != nil {
		return ps.err
	}
	if ps.done >= pr.n {
		return fmt.Errorf("trace: %s: partition %d: the segment's %d windows are read", pr.br.name, p, pr.n)
	}
	if !ps.ready { // not fmt.Sprintf's allocation on every window
		if err := pr.ready(ps, fmt.Sprintf("partition %d payload", p)); err != nil {
			ps.err = err
			return err
		}
	}
	k := ps.done
	w := pr.first + k
	win.Reset(w)
	if pr.perPart {
		return pr.partWindow4(p, ps, win, count || pr.count)
	}
	// The partition's new pages in this window.
	m := 0
	if ps.rc < len(ps.runs) && ps.runs[ps.rc].k == uint32(k) {
		m = int(ps.runs[ps.rc].n)
		ps.rc++
	}
	if count || pr.count {
		win.Unlisted = m
	} else {
		for _, j := range ps.idx[ps.ic : ps.ic+m] {
			win.New = append(win.New, pr.segPages[j])
		}
		ps.ic += m
	}
	ps.npages += uint64(m)
	if msg := decodeLists(&ps.d, win, ps.npages); msg != "" {
		ps.err = pr.corrupt(ps.off, w-1, nil, "window %d partition %d payload: %s", w, p, msg)
		return ps.err
	}
	ps.done++
	return nil
}

// partWindow4 decodes partition p's next window of a version 4 segment:
// its new pages, each of which must be in p, then its lists.
func (pr *partReader) partWindow4(p int, ps *partState, win *Window, count bool) error {
	w := win.Index
	n, msg := decodeNew(&ps.d, win, ps.npages, count, func(pg Page) string {
		if q := pr.pt.of(pg); q != p {
			if q < 0 {
				return fmt.Sprintf("page %v is not in the trace's sample", pg)
			}
			return fmt.Sprintf("page %v is in partition %d", pg, q)
		}
		return fmt.Sprintf("page %v: digit outside partition %d's %d..%d, but of() says it is in it", pg, p, ps.span.lo, ps.span.hi)
	}, &ps.span)
	if msg == "" {
		ps.npages += n
		msg = decodeLists(&ps.d, win, ps.npages)
	}
	if msg != "" {
		ps.err = pr.corrupt(ps.off, w-1, nil, "window %d partition %d payload: %s", w, p, msg)
		return ps.err
	}
	ps.done++
	return nil
}

// Read returns the next window of the selected partitions together: their
// new pages in (space, page) order, as version 1 has them, get the next
// dense IDs; the lists are partition 0's, then partition 1's, and so on,
// each in ascending order, so a list as a whole need not be sorted.
func (pr *partReader) Read() (*Window, error) {
	if pr.err != nil {
		return nil, pr.err
	}
	win, err := pr.read()
	if err != nil {
		pr.err = err
		return nil, err
	}
	return win, nil
}

func (pr *partReader) read() (*Window, error) {
	if pr.k == pr.n {
		if _, _, err := pr.nextSegment(); err != nil {
			return nil, err
		}
	}
	br := pr.br
	k := pr.k
	w := pr.first + k
	out := &pr.wins[pr.cur]
	out.Reset(w)
	if pr.perPart {
		if err := pr.read4(out); err != nil {
			return nil, err
		}
	} else if err := pr.read3(k, out); err != nil {
		return nil, err
	}
	if k+1 == pr.n {
		for _, p := range pr.sel {
			ps := &pr.parts[p]
			if ps.d.i != len(ps.d.p) {
				return nil, pr.corrupt(ps.off, w-1, nil, "partition %d payload: %d unexpected bytes after window %d", p, len(ps.d.p)-ps.d.i, w)
			}
		}
	}
	pr.k++
	br.next = w + 1
	if pr.double {
		pr.cur ^= 1
	}
	return out, nil
}

// read3 merges window k of a version 3 segment into out.
func (pr *partReader) read3(k int, out *Window) error {
	br := pr.br
	// The selected partitions' new pages, in (space, page) order (when
	// they are counted, the order of their IDs does not matter).
	if pr.count {
		for _, p := range pr.sel {
			ps := &pr.parts[p]
			if ps.rc < len(ps.runs) && ps.runs[ps.rc].k == uint32(k) {
				for range ps.runs[ps.rc].n {
					pr.l2g[p] = append(pr.l2g[p], uint32(pr.npages))
					pr.npages++
					out.Unlisted++
				}
			}
		}
	} else {
		for j := pr.winStart[k]; j < pr.winStart[k+1]; j++ {
			p := int(pr.segPart[j])
			pr.l2g[p] = append(pr.l2g[p], uint32(pr.npages))
			pr.npages++
			out.New = append(out.New, pr.segPages[j])
		}
	}
	if !pr.discard {
		br.pages = append(br.pages, out.New...)
	}
	sc := &pr.scratch
	for _, p := range pr.sel {
		if err := pr.PartitionWindow(p, sc, true); err != nil {
			return err
		}
		pr.appendLists(out, p, sc)
	}
	return nil
}

// appendLists appends partition p's lists of win to out's, in merged IDs.
func (pr *partReader) appendLists(out *Window, p int, win *Window) {
	m := pr.l2g[p]
	for _, id := range win.Accessed {
		out.Accessed = append(out.Accessed, m[id])
	}
	for _, id := range win.Born {
		out.Born = append(out.Born, m[id])
	}
	for _, id := range win.Freed {
		out.Freed = append(out.Freed, m[id])
	}
}

// read4 merges the next window of a version 4 segment into out: each
// selected partition's window is decoded, and their new pages merged in
// (space, page) order (counted, partition by partition), get the next
// dense IDs.
func (pr *partReader) read4(out *Window) error {
	br := pr.br
	if len(pr.psc) < pr.nsel {
		pr.psc = make([]Window, pr.nsel)
	}
	pr.heads = pr.heads[:0]
	for _, p := range pr.sel {
		sc := &pr.psc[p]
		if err := pr.PartitionWindow(p, sc, pr.count); err != nil {
			return err
		}
		if pr.count {
			for range sc.Unlisted {
				pr.l2g[p] = append(pr.l2g[p], uint32(pr.npages))
				pr.npages++
			}
			out.Unlisted += sc.Unlisted
			continue
		}
		if len(sc.New) > 0 {
			pr.parts[p].ni = 0
			pr.heads = append(pr.heads, p)
		}
	}
	if !pr.count {
		// A k-way merge: heads is a min-heap of the partitions by their
		// next new page.
		less := func(a, b int) bool {
			pa, pb := pr.heads[a], pr.heads[b]
			return pageLess(pr.psc[pa].New[pr.parts[pa].ni], pr.psc[pb].New[pr.parts[pb].ni])
		}
		h := pr.heads
		for i := len(h)/2 - 1; i >= 0; i-- {
			siftDown(h, i, less)
		}
		for len(h) > 0 {
			p := h[0]
			ps := &pr.parts[p]
			out.New = append(out.New, pr.psc[p].New[ps.ni])
			pr.l2g[p] = append(pr.l2g[p], uint32(pr.npages))
			pr.npages++
			if ps.ni++; ps.ni == len(pr.psc[p].New) {
				h[0] = h[len(h)-1]
				h = h[:len(h)-1]
				pr.heads = h
			}
			siftDown(h, 0, less)
		}
		if !pr.discard {
			br.pages = append(br.pages, out.New...)
		}
	}
	for _, p := range pr.sel {
		pr.appendLists(out, p, &pr.psc[p])
	}
	return nil
}

// siftDown restores the heap order of h below i.
func siftDown(h []int, i int, less func(a, b int) bool) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && less(c+1, c) {
			c++
		}
		if !less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
