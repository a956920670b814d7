package collect

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"mdk/trace"
)

// Tracers of [RunExact].
const (
	// TracerAuto is TracerPages when mdk's valgrind tool can be built and
	// TracerLackey otherwise (with a message saying why).
	TracerAuto = "auto"
	// TracerPages runs mdk's own valgrind tool (collect/tool/mdkpages.c),
	// which keeps each window's page set inside the traced process and
	// writes only each window's distinct pages.
	TracerPages = "pages"
	// TracerLackey runs valgrind's lackey and parses its text log of
	// every access: the same trace, at 100-400 times the CPU time (docs/bench.md).
	TracerLackey = "lackey"
)

// pageToolMagic opens the page tool's output stream.
const pageToolMagic = "MDKPGS01"

// pageToolEnd marks the end record in place of a window's page count.
const pageToolEnd = math.MaxUint64

// PageToolReader reads the output of mdk's valgrind page tool (mdkpages):
// a header, then per window the count of distinct pages, the window's
// instruction count and the pages, in the order of their first touch in the
// window, then an end record with the total instruction count. All words are
// 64-bit, in the machine's byte order (the tool runs on the same machine).
// It yields the same windows as a [LackeyReader] of a lackey log of the
// same run: pages in space 0, numbered address/4096, accessed only.
//
// Memory grows with the pages read, never with a count the stream claims.
// The reader implements [trace.Reader].
type PageToolReader struct {
	br     *bufio.Reader
	name   string
	n      int64
	header trace.Header
	off    int64 // bytes read

	ids   map[uint64]uint32
	pages []trace.Page
	stamp []int

	win      trace.Window
	started  bool
	short    bool  // the last window read had fewer than n instructions
	instrs   int64 // instructions in the windows read
	complete bool  // the end record was read
	err      error
}

var _ trace.Reader = (*PageToolReader)(nil)

// NewPageToolReader reads the stream header from r and returns a reader of
// its windows. windowInstructions is the window length the tool was given:
// the header must agree. name is used in error messages.
func NewPageToolReader(r io.Reader, name string, windowInstructions int64) (*PageToolReader, error) {
	pr := &PageToolReader{br: bufio.NewReaderSize(r, 64<<10), name: name, n: windowInstructions, ids: make(map[uint64]uint32)}
	var magic [8]byte
	if _, err := io.ReadFull(pr.br, magic[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, pr.errorf(err, "reading the header")
	}
	pr.off = 8
	if string(magic[:]) != pageToolMagic {
		return nil, pr.errorf(nil, "not mdkpages output (starts with %q, want %q)", magic[:], pageToolMagic)
	}
	pageSize, err := pr.word("the page size")
	if err != nil {
		return nil, err
	}
	if pageSize != LackeyPageSize {
		return nil, pr.errorf(nil, "page size %d, want %d", pageSize, LackeyPageSize)
	}
	win, err := pr.word("the window length")
	if err != nil {
		return nil, err
	}
	if windowInstructions < 1 || win != uint64(windowInstructions) {
		return nil, pr.errorf(nil, "window of %d instructions, want %d", win, windowInstructions)
	}
	pr.header = trace.Header{
		PageSize: LackeyPageSize,
		Window:   time.Duration(windowInstructions),
		Source:   fmt.Sprintf("valgrind mdkpages (mdk's page-set tool) run of %s; window = %d instructions (header window: 1 instruction = 1ns)", name, windowInstructions),
	}
	return pr, nil
}

func (pr *PageToolReader) errorf(cause error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if cause != nil {
		if errors.Is(cause, io.EOF) {
			cause = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%s: byte %d: %s: %w", pr.name, pr.off, msg, cause)
	}
	return fmt.Errorf("%s: byte %d: %s", pr.name, pr.off, msg)
}

// word reads one 64-bit word; what names it in an error.
func (pr *PageToolReader) word(what string) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(pr.br, b[:]); err != nil {
		return 0, pr.errorf(err, "reading %s (stream cut short?)", what)
	}
	pr.off += 8
	return binary.NativeEndian.Uint64(b[:]), nil
}

// Header returns the trace header. Windows is 0: the count is known only at
// the end.
func (pr *PageToolReader) Header() trace.Header { return pr.header }

// Pages returns every page announced so far, by dense ID.
func (pr *PageToolReader) Pages() []trace.Page { return pr.pages }

// Instructions returns the instructions of the windows read so far.
func (pr *PageToolReader) Instructions() int64 { return pr.instrs }

// Complete reports whether the stream's end record was read: false after
// io.EOF means the tool was stopped before the program ended.
func (pr *PageToolReader) Complete() bool { return pr.complete }

// Read returns the next window, or io.EOF after the last one (at the end
// record, or at the end of a stream cut short between two windows).
func (pr *PageToolReader) Read() (*trace.Window, error) {
	if pr.err != nil {
		return nil, pr.err
	}
	pr.err = pr.read()
	if pr.err != nil {
		return nil, pr.err
	}
	return &pr.win, nil
}

func (pr *PageToolReader) read() error {
	var b [8]byte
	if _, err := io.ReadFull(pr.br, b[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF // cut short between windows
		}
		return pr.errorf(err, "reading a window's page count")
	}
	pr.off += 8
	count := binary.NativeEndian.Uint64(b[:])
	if count == pageToolEnd {
		total, err := pr.word("the total instruction count")
		if err != nil {
			return err
		}
		if total != uint64(pr.instrs) {
			return pr.errorf(nil, "end record counts %d instructions, the windows %d", total, pr.instrs)
		}
		if _, err := pr.br.ReadByte(); err == nil {
			return pr.errorf(nil, "data after the end record")
		}
		pr.complete = true
		return io.EOF
	}
	if pr.short {
		return pr.errorf(nil, "a window follows one of fewer than %d instructions", pr.n)
	}
	instrs, err := pr.word("a window's instruction count")
	if err != nil {
		return err
	}
	if instrs < 1 || instrs > uint64(pr.n) {
		return pr.errorf(nil, "window of %d instructions, want 1 to %d", instrs, pr.n)
	}
	if count == 0 {
		return pr.errorf(nil, "window with no pages (every instruction touches its own page)")
	}
	if pr.started {
		pr.win.Reset(pr.win.Index + 1)
	} else {
		pr.win.Reset(0)
		pr.started = true
	}
	stamp := pr.win.Index + 1
	for i := uint64(0); i < count; i++ {
		pg, err := pr.word("a page")
		if err != nil {
			return err
		}
		if pg > math.MaxUint64/LackeyPageSize {
			return pr.errorf(nil, "page %#x is beyond a 64-bit address space", pg)
		}
		id, ok := pr.ids[pg]
		if !ok {
			id = uint32(len(pr.pages))
			pr.ids[pg] = id
			p := trace.Page{Page: pg}
			pr.pages = append(pr.pages, p)
			pr.stamp = append(pr.stamp, 0)
			pr.win.New = append(pr.win.New, p)
		}
		if pr.stamp[id] == stamp {
			return pr.errorf(nil, "page %#x twice in window %d", pg, pr.win.Index)
		}
		pr.stamp[id] = stamp
		pr.win.Accessed = append(pr.win.Accessed, id)
	}
	pr.instrs += int64(instrs)
	pr.short = instrs < uint64(pr.n)
	return nil
}
