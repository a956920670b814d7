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
	"time"
)

// binaryReader reads the binary format of docs/trace-format.md.
//
// Buffers are reused: the compressed and decompressed payloads, and the
// slices of the returned Window, which is valid until the next Read.
type binaryReader struct {
	r     io.Reader
	name  string
	off   int64 // offset of the next unread byte
	hdr   Header
	pages []Page
	// npages counts the pages announced; pages holds them unless the
	// consumer said it does not need them (DiscardPages).
	npages  uint64
	discard bool
	count   bool      // CountNew: new pages are checked and counted, not listed
	wins    [2]Window // the window decodes into wins[cur]
	cur     int
	double  bool  // DoubleBuffer: alternate between wins
	next    int   // index of the next window
	err     error // sticky: io.EOF or a *CorruptError
	comp    []byte
	raw     []byte
	small   [blockHeaderSize]byte
	// seeker, if not nil, is the file under r, for a partitioned reader to
	// skip the partitions it does not read; size is the file's size (-1:
	// not known yet).
	seeker  io.ReadSeeker
	skipBuf *bufio.Reader // r once skip has sought (partitioned traces)
	size    int64
	version uint32
	parts   Partitioning // versions 3 to 5, with their cuts
}

// NewBinaryReader returns a reader of a binary trace (docs/trace-format.md)
// on r, after reading and checking its magic, version and header. name is
// used in error messages. Damage is reported as a *[CorruptError].
func NewBinaryReader(r io.Reader, name string) (Reader, error) {
	if _, ok := r.(*bufio.Reader); !ok {
		r = bufio.NewReaderSize(r, 256<<10)
	}
	br := &binaryReader{r: r, name: name, next: 0, size: -1}
	if err := br.readHeader(); err != nil {
		return nil, err
	}
	if br.version >= binaryPartitionedV3 {
		return newPartReader(br), nil
	}
	return br, nil
}

func (br *binaryReader) corrupt(off int64, cause error, format string, args ...any) *CorruptError {
	return &CorruptError{File: br.name, Offset: off, LastWindow: br.next - 1, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// readFull reads len(p) bytes at the current offset; what names the element
// for the truncation error, after "window N " if what starts with a space.
func (br *binaryReader) readFull(p []byte, start int64, what string) error {
	n, err := io.ReadFull(br.r, p)
	br.off += int64(n)
	if err == nil {
		return nil
	}
	if strings.HasPrefix(what, " ") {
		what = fmt.Sprintf("window %d%s", br.next, what)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return br.corrupt(start, io.ErrUnexpectedEOF, "truncated %s: file ends at byte offset %d", what, br.off)
	}
	return br.corrupt(start, err, "read %s: %v", what, err)
}

// readCuts reads version 5's partition cuts into parts: Count widths,
// each at least 1, adding up to the rate r.
func readCuts(d *decoder, parts *Partitioning, r uint64) string {
	parts.Cuts = make([]uint32, 1, parts.Count+1)
	c := uint64(0)
	for p := range parts.Count {
		w := d.uvarint()
		switch {
		case d.bad != "":
			return fmt.Sprintf("width of partition %d: %s", p, d.bad)
		case w < 1:
			return fmt.Sprintf("partition %d is empty (width 0): the cuts must increase strictly", p)
		case w > r-c:
			return fmt.Sprintf("partition %d's width %d takes the cuts past the trace's rate %d (at %d)", p, w, r, c)
		}
		c += w
		parts.Cuts = append(parts.Cuts, uint32(c))
	}
	if c != r {
		return fmt.Sprintf("the %d partitions end at digit %d, not at the trace's rate %d", parts.Count, c, r)
	}
	return ""
}

func (br *binaryReader) readHeader() error {
	var fixed [16]byte
	n, err := io.ReadFull(br.r, fixed[:len(BinaryMagic)])
	br.off += int64(n)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return br.corrupt(0, err, "read magic: %v", err)
	}
	if string(fixed[:n]) != BinaryMagic {
		if n < len(BinaryMagic) && string(fixed[:n]) == BinaryMagic[:n] {
			return br.corrupt(0, io.ErrUnexpectedEOF, "truncated magic: file has only %d bytes", n)
		}
		return br.corrupt(0, nil, "not an mdk binary trace: starts with %q, want %q", fixed[:n], BinaryMagic)
	}
	if err := br.readFull(fixed[8:16], 8, "header"); err != nil {
		return err
	}
	version := binary.LittleEndian.Uint32(fixed[8:])
	if version < BinaryVersion || version > BinaryPartitionedVersion {
		return br.corrupt(8, ErrVersion, "unsupported binary format version %d (this mdk reads versions %d to %d)", version, BinaryVersion, BinaryPartitionedVersion)
	}
	br.version = version
	h := binary.LittleEndian.Uint32(fixed[12:])
	if h > maxHeaderBytes {
		return br.corrupt(12, nil, "header length %d exceeds the limit of %d bytes", h, maxHeaderBytes)
	}
	// Read through a growing buffer so that a forged length in a short file
	// allocates no more than the file holds.
	fields, err := br.readGrowing(nil, int(h), 8, "header")
	if err != nil {
		return err
	}
	var crcb [4]byte
	if err := br.readFull(crcb[:], 8, "header"); err != nil {
		return err
	}
	crc := crc32.Update(crc32.Checksum(fixed[8:16], castagnoli), castagnoli, fields)
	if got := binary.LittleEndian.Uint32(crcb[:]); got != crc {
		return br.corrupt(8, ErrChecksum, "header checksum mismatch: stored %08x, computed %08x", got, crc)
	}
	d := decoder{p: fields}
	pageSize := d.uvarint()
	window := d.uvarint()
	windows := d.uvarint()
	var sample Sample
	if version == BinarySampledVersion {
		ppm := d.uvarint()
		sample.Seed = d.uvarint()
		if d.bad == "" && (ppm < 1 || ppm >= SampleAll || SampleAll%ppm != 0) {
			return br.corrupt(16, nil, "header: sampling rate %d ppm: want a divisor of 1000000 below it", ppm)
		}
		sample.PPM = int64(ppm)
	}
	var parts Partitioning
	if version >= binaryPartitionedV3 {
		ppm := d.uvarint()
		parts.Seed = d.uvarint()
		n := d.uvarint()
		if d.bad == "" && ppm != 0 && (ppm >= SampleAll || SampleAll%ppm != 0) {
			return br.corrupt(16, nil, "header: sampling rate %d ppm: want 0 (a whole trace) or a divisor of 1000000 below it", ppm)
		}
		if d.bad == "" && (n < 1 || n > MaxPartitions) {
			return br.corrupt(16, nil, "header: %d partitions: want 1 .. %d", n, MaxPartitions)
		}
		r := uint64(SampleAll)
		if ppm != 0 {
			sample = Sample{PPM: int64(ppm), Seed: parts.Seed}
			r = ppm
		}
		parts.Count = int(n)
		if d.bad != "" {
			return br.corrupt(16, nil, "header: %s", d.bad)
		}
		if version < BinaryPartitionedVersion {
			parts.Cuts = EqualCuts(parts.Count, r)
		} else if msg := readCuts(&d, &parts, r); msg != "" {
			return br.corrupt(16, nil, "header: partition cuts: %s", msg)
		}
		br.parts = parts
	}
	srcLen := d.uvarint()
	switch {
	case d.bad != "":
		return br.corrupt(16, nil, "header: %s", d.bad)
	case pageSize < 1 || pageSize > 1<<62:
		return br.corrupt(16, nil, "header: page size %d out of range", pageSize)
	case window < 1 || window > 1<<62:
		return br.corrupt(16, nil, "header: window length %d ns out of range", window)
	case windows > maxWindows:
		return br.corrupt(16, nil, "header: window count %d exceeds the limit of %d", windows, uint64(maxWindows))
	case srcLen != uint64(len(fields)-d.i):
		return br.corrupt(16, nil, "header: source length %d does not fill the %d remaining header bytes", srcLen, len(fields)-d.i)
	}
	br.hdr = Header{
		PageSize: int(pageSize),
		Window:   time.Duration(window),
		Windows:  int(windows),
		Source:   string(fields[d.i:]),
		Sample:   sample,
	}
	return nil
}

// readGrowing reads n bytes into buf[:0], growing it at most 1 MiB (or by
// doubling) ahead of the bytes actually read.
func (br *binaryReader) readGrowing(buf []byte, n int, start int64, what string) ([]byte, error) {
	if cap(buf) >= n {
		buf = buf[:n]
		return buf, br.readFull(buf, start, what)
	}
	buf = buf[:0]
	for len(buf) < n {
		chunk := min(n-len(buf), max(1<<20, len(buf)))
		buf = slices.Grow(buf, chunk)
		at := len(buf)
		buf = buf[:at+chunk]
		if err := br.readFull(buf[at:], start, what); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func (br *binaryReader) Header() Header { return br.hdr }
func (br *binaryReader) Pages() []Page  { return br.pages }

// DiscardPages tells the reader that its consumer needs dense IDs only: it
// stops keeping the page table (16 bytes a page), and Pages returns only the
// pages announced before the call.
func (br *binaryReader) DiscardPages() { br.discard = true }

// CountNew makes the reader count each window's new pages in
// Window.Unlisted instead of listing them in Window.New; it discards the
// page table too. The pages are checked as before.
func (br *binaryReader) CountNew() { br.count, br.discard = true, true }

// DoubleBuffer makes the reader decode into two windows in turn.
func (br *binaryReader) DoubleBuffer() { br.double = true }

// Read returns the next window. The steps:
//  1. read the tag; at the end block check the count and that nothing follows;
//  2. read the block header and the payload, check sizes and the CRC;
//  3. decompress and decode the payload into the reused window.
func (br *binaryReader) Read() (*Window, error) {
	if br.err != nil {
		return nil, br.err
	}
	win, err := br.read()
	if err != nil {
		br.err = err
		return nil, err
	}
	return win, nil
}

// readTag reads a block's tag into br.small[0]; the file must not end
// before it.
func (br *binaryReader) readTag(start int64) error {
	n, err := io.ReadFull(br.r, br.small[:1])
	br.off += int64(n)
	if n == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return br.corrupt(start, io.ErrUnexpectedEOF, "truncated: no end block after window %d (the writer did not finish)", br.next-1)
		}
		return br.corrupt(start, err, "read block: %v", err)
	}
	return nil
}

func (br *binaryReader) read() (*Window, error) {
	// Step 1.
	start := br.off
	if err := br.readTag(start); err != nil {
		return nil, err
	}
	switch br.small[0] {
	case tagEnd:
		return nil, br.readEnd(start)
	case tagWindow:
	default:
		return nil, br.corrupt(start, nil, "bad block tag 0x%02x, want 'W' (window %d) or 'E' (end)", br.small[0], br.next)
	}

	// Step 2.
	if err := br.readFull(br.small[1:blockHeaderSize], start, " block header"); err != nil {
		return nil, err
	}
	index := binary.LittleEndian.Uint32(br.small[1:])
	u := binary.LittleEndian.Uint32(br.small[5:])
	c := binary.LittleEndian.Uint32(br.small[9:])
	if int64(index) != int64(br.next) {
		return nil, br.corrupt(start, nil, "block for window %d where window %d was expected", index, br.next)
	}
	if br.hdr.Windows != 0 && br.next >= br.hdr.Windows {
		return nil, br.corrupt(start, nil, "window %d beyond the %d windows the header declares", br.next, br.hdr.Windows)
	}
	if u > maxBlockBytes || c > maxBlockBytes {
		return nil, br.corrupt(start, nil, "window %d block sizes %d (raw) / %d (compressed) exceed the limit of %d", br.next, u, c, maxBlockBytes)
	}
	var err error
	br.comp, err = br.readGrowing(br.comp, int(c), start, " block payload")
	if err != nil {
		return nil, err
	}
	crc := crc32.Update(crc32.Checksum(br.small[:13], castagnoli), castagnoli, br.comp)
	if got := binary.LittleEndian.Uint32(br.small[13:]); got != crc {
		return nil, br.corrupt(start, ErrChecksum, "window %d block checksum mismatch: stored %08x, computed %08x", br.next, got, crc)
	}

	// Step 3.
	_, dec, zerr := zstdCoders()
	if zerr != nil {
		return nil, br.corrupt(start, zerr, "zstd: %v", zerr)
	}
	br.raw, err = dec.DecodeAll(br.comp, br.raw[:0])
	if err != nil {
		return nil, br.corrupt(start, err, "window %d payload does not decompress: %v", br.next, err)
	}
	if len(br.raw) != int(u) {
		return nil, br.corrupt(start, nil, "window %d payload decompresses to %d bytes, the block says %d", br.next, len(br.raw), u)
	}
	if msg := br.decode(); msg != "" {
		return nil, br.corrupt(start, nil, "window %d payload: %s", br.next, msg)
	}
	br.next++
	win := &br.wins[br.cur]
	if br.double {
		br.cur ^= 1
	}
	return win, nil
}

// readEnd reads the end block whose tag, at start, was read: it returns
// io.EOF if it is intact and ends the file.
func (br *binaryReader) readEnd(start int64) error {
	if err := br.readFull(br.small[1:endBlockSize], start, "end block"); err != nil {
		return err
	}
	crc := crc32.Checksum(br.small[:5], castagnoli)
	if got := binary.LittleEndian.Uint32(br.small[5:]); got != crc {
		return br.corrupt(start, ErrChecksum, "end block checksum mismatch: stored %08x, computed %08x", got, crc)
	}
	count := binary.LittleEndian.Uint32(br.small[1:])
	if int64(count) != int64(br.next) {
		return br.corrupt(start, nil, "end block says %d windows, the file has %d", count, br.next)
	}
	if br.hdr.Windows != 0 && br.hdr.Windows != br.next {
		return br.corrupt(start, nil, "header declares %d windows, the file has %d", br.hdr.Windows, br.next)
	}
	if m, _ := io.ReadFull(br.r, br.small[:1]); m != 0 {
		return br.corrupt(br.off, nil, "unexpected data after the end block")
	}
	return io.EOF
}

// decode parses br.raw into br.wins[br.cur] and appends the new pages to br.pages.
// It returns what is wrong, or "".
func (br *binaryReader) decode() string {
	d := decoder{p: br.raw}
	win := &br.wins[br.cur]
	win.Reset(br.next)
	n, listed, msg := decodeWindow(&d, win, br.npages, br.count)
	if listed {
		if !br.discard {
			br.pages = append(br.pages, win.New...)
		}
		br.npages += n
	}
	if msg != "" {
		return msg
	}
	if d.i != len(d.p) {
		return fmt.Sprintf("%d unexpected bytes after the f list", len(d.p)-d.i)
	}
	return ""
}

// decodeWindow decodes one window payload (docs/trace-format.md) from d
// into win, which was Reset: its new pages get the dense IDs from base on,
// and are counted in Unlisted instead of listed if count. It returns the number of
// new pages, or what is wrong.
func decodeWindow(d *decoder, win *Window, base uint64, count bool) (n uint64, listed bool, msg string) {
	if n, msg = decodeNew(d, win, base, count, nil, nil); msg != "" {
		return 0, false, msg
	}
	return n, true, decodeLists(d, win, base+n)
}

// decodeNew decodes a window's new pages from d, appending them to win.New
// (or counting them in win.Unlisted if count), and passing each to each if
// it is not nil, which says what is wrong with it, if anything. If in is
// not nil, each page's digit must be in it instead, and each is called only
// to say what is wrong with a page whose digit is not. It returns their
// number, or what is wrong.
func decodeNew(d *decoder, win *Window, base uint64, count bool, each func(Page) string, in *digitSpan) (n uint64, msg string) {
	n = d.uvarint()
	if d.bad != "" {
		return 0, d.bad
	}
	if n > uint64(len(d.p)-d.i)/2 {
		return 0, fmt.Sprintf("new-page count %d exceeds what the %d remaining bytes can hold", n, len(d.p)-d.i)
	}
	if base+n > maxPages {
		return 0, fmt.Sprintf("too many pages (max %d)", uint64(maxPages))
	}
	if !count {
		win.New = slices.Grow(win.New, int(n))
	}
	var prev Page
	var hs uint64 // in's hash of prev.Space: Sample.Hash's first half
	for k := range int(n) {
		ds := d.uvarint()
		x := d.uvarint()
		if d.bad != "" {
			return 0, fmt.Sprintf("new page %d: %s", k, d.bad)
		}
		p := Page{Space: prev.Space, Page: prev.Page + x}
		if ds != 0 {
			s := uint64(prev.Space) + ds
			if s > 1<<32-1 {
				return 0, fmt.Sprintf("new page %d: space %d does not fit in 32 bits", k, s)
			}
			p = Page{Space: uint32(s), Page: x}
		} else if x == 0 && k > 0 || p.Page < prev.Page {
			return 0, fmt.Sprintf("new page %d: %v is not above the previous new page %v", k, p, prev)
		}
		if in != nil {
			if k == 0 || ds != 0 {
				hs = mix64(in.seed ^ uint64(p.Space))
			}
			if q := mix64(hs^p.Page) % SampleAll; q < in.lo || q >= in.hi {
				return 0, fmt.Sprintf("new page %d: %s", k, each(p))
			}
		} else if each != nil {
			if msg := each(p); msg != "" {
				return 0, fmt.Sprintf("new page %d: %s", k, msg)
			}
		}
		if !count {
			win.New = append(win.New, p)
		}
		prev = p
	}
	if count {
		win.Unlisted += int(n)
	}
	return n, ""
}

// decodeLists decodes a window's three lists from d into win, every ID
// below total. It returns what is wrong, or "".
func decodeLists(d *decoder, win *Window, total uint64) string {
	var msg string
	if win.Accessed, msg = d.list(win.Accessed, total); msg != "" {
		return "a list: " + msg
	}
	if win.Born, msg = d.list(win.Born, total); msg != "" {
		return "b list: " + msg
	}
	if win.Freed, msg = d.list(win.Freed, total); msg != "" {
		return "f list: " + msg
	}
	return ""
}

// decoder reads uvarints from p; the first problem is kept in bad.
type decoder struct {
	p   []byte
	i   int
	bad string
}

func (d *decoder) uvarint() uint64 {
	if d.bad != "" {
		return 0
	}
	if d.i < len(d.p) && d.p[d.i] < 0x80 {
		v := d.p[d.i]
		d.i++
		return uint64(v)
	}
	v, m := binary.Uvarint(d.p[d.i:])
	switch {
	case m == 0:
		d.bad = fmt.Sprintf("truncated varint at payload byte %d", d.i)
		return 0
	case m < 0:
		d.bad = fmt.Sprintf("varint overflows 64 bits at payload byte %d", d.i)
		return 0
	case d.p[d.i+m-1] == 0:
		d.bad = fmt.Sprintf("non-minimal varint at payload byte %d", d.i)
		return 0
	}
	d.i += m
	return v
}

// list decodes one ID list into dst[:0]. It is the hot loop of the reader:
// where the next eight gaps are one byte each (the common case for dense
// windows) it decodes them at once from one 64-bit load.
func (d *decoder) list(dst []uint32, total uint64) ([]uint32, string) {
	n := d.uvarint()
	if d.bad != "" {
		return dst, d.bad
	}
	if n > uint64(len(d.p)-d.i) {
		return dst, fmt.Sprintf("count %d exceeds the %d remaining bytes", n, len(d.p)-d.i)
	}
	dst = slices.Grow(dst[:0], int(n))[:n]
	p, i := d.p, d.i
	next := uint64(0) // the smallest ID the next entry may have
	for k := 0; k < len(dst); {
		if k+8 <= len(dst) && i+8 <= len(p) {
			if x := binary.LittleEndian.Uint64(p[i:]); x&0x8080808080808080 == 0 {
				// IDs below total < 2^32 plus eight gaps below 2^7 cannot
				// overflow, and the last ID is the largest.
				out := dst[k : k+8 : k+8]
				id := next + x&0x7f
				out[0] = uint32(id)
				id += 1 + x>>8&0x7f
				out[1] = uint32(id)
				id += 1 + x>>16&0x7f
				out[2] = uint32(id)
				id += 1 + x>>24&0x7f
				out[3] = uint32(id)
				id += 1 + x>>32&0x7f
				out[4] = uint32(id)
				id += 1 + x>>40&0x7f
				out[5] = uint32(id)
				id += 1 + x>>48&0x7f
				out[6] = uint32(id)
				id += 1 + x>>56&0x7f
				out[7] = uint32(id)
				if id >= total {
					return dst, fmt.Sprintf("entries %d..%d: page ID %d not announced (%d pages so far)", k, k+7, id, total)
				}
				next = id + 1
				i += 8
				k += 8
				continue
			}
		}
		var g uint64
		if i < len(p) && p[i] < 0x80 {
			g = uint64(p[i])
			i++
		} else {
			d.i = i
			g = d.uvarint()
			if d.bad != "" {
				return dst, d.bad
			}
			i = d.i
		}
		id := next + g
		if id >= total || id < next {
			return dst, fmt.Sprintf("entry %d: page ID %d not announced (%d pages so far)", k, id, total)
		}
		dst[k] = uint32(id)
		next = id + 1
		k++
	}
	d.i = i
	return dst, ""
}
