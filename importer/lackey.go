package importer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"mdk/trace"
)

// Lackey log format, as valgrind's lackey tool writes it with
// --trace-mem=yes (lackey/lk_main.c: "I  %08lx,%lu", " L %08lx,%lu", ...):
//
//	==6709== Lackey, an example Valgrind tool
//	==6709== Command: /bin/true
//	I  0401ab70,3
//	 S 1fff000758,8
//	 L 04a17de0,8
//	 M 0402cf80,4
//	==6709== Exit code:       0
//
// "I" is an instruction fetch, "L" a load, "S" a store, "M" a modify (a load
// and a store of the same bytes). The address is hexadecimal without "0x",
// the size in bytes decimal. Lines of valgrind's own chatter are prefixed
// "==PID==", "--PID--" or "**PID**" and skipped.

// lackey is valgrind's lackey log. It is not a stream of records for the
// [Windower]: its windows count instructions and its reader (also used
// live, by mdk record --exact) builds them itself.
var lackeyFormat = &Format{
	Name:         "lackey",
	Short:        "valgrind --tool=lackey --trace-mem=yes log (windows of --window-instructions)",
	Instructions: true,
	newReader: func(r io.Reader, name string, o *Options) trace.Reader {
		return NewLackeyReader(r, name, o.WindowInstructions)
	},
}

// LackeyPageSize is the page size of traces made from lackey logs.
const LackeyPageSize = 4096

// DefaultWindowInstructions is the default window length of traces made
// from lackey logs, in executed instructions.
const DefaultWindowInstructions = 10_000_000

// lackeyMaxSize bounds the size of one access. Real accesses are at most a
// few kilobytes (XSAVE areas); the bound keeps a corrupt size from making the
// reader walk billions of pages.
const lackeyMaxSize = 1 << 20

// lackeyMaxLine bounds one line; real lines are under 80 bytes.
const lackeyMaxLine = 4096

// LackeyReader turns a valgrind lackey --trace-mem=yes log into a trace,
// streaming: it holds one window and a table of the pages seen, never the
// log. Windows are counted in executed instructions: each "I" line is one
// instruction, and window k holds instructions k*N .. (k+1)*N-1 together with
// the data accesses that follow them in the log. Every access records, as
// accessed (a), each 4096-byte page its bytes span: an access that crosses a
// page boundary touches both pages. Lackey cannot see mappings, so the trace
// has no births or frees. Pages are in space 0, numbered address/4096.
//
// The window returned by Read is owned by the reader and valid until the
// next Read. The reader implements [trace.Reader]; its errors are
// *[SyntaxError] values naming the line.
type LackeyReader struct {
	br     *bufio.Reader
	own    *bufio.Reader // our buffer when the source is not buffered
	name   string
	n      int64 // instructions per window
	header trace.Header

	line   int64 // lines read
	instrs int64 // instructions in the current window
	lines  int64 // trace lines (I, L, S, M) read
	acc    int64 // page accesses, before deduplication within a window

	ids   map[uint64]uint32
	pages []trace.Page
	stamp []int // per dense ID: window index + 1 of its last record

	// one-entry caches of the last instruction and data page
	iPage, dPage uint64
	iID, dID     uint32
	iOK, dOK     bool

	win      trace.Window
	started  bool // win holds the window being filled
	pending  bool // an I line that begins the next window was read
	pendAddr uint64
	pendSize uint64
	err      error // sticky error, io.EOF at the end
}

var _ trace.Reader = (*LackeyReader)(nil)

// NewLackeyReader returns a reader of the lackey log r, with windows of
// windowInstructions executed instructions. name is used in error messages.
// A windowInstructions below 1 makes every Read fail.
func NewLackeyReader(r io.Reader, name string, windowInstructions int64) trace.Reader {
	lr := &LackeyReader{}
	lr.Reset(r, name, windowInstructions)
	return lr
}

// Reset makes lr read a new log from r, keeping its storage.
func (lr *LackeyReader) Reset(r io.Reader, name string, windowInstructions int64) {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < lackeyMaxLine {
		if lr.own == nil {
			lr.own = bufio.NewReaderSize(r, 64<<10)
		} else {
			lr.own.Reset(r)
		}
		br = lr.own
	}
	ids := lr.ids
	if ids == nil {
		ids = make(map[uint64]uint32)
	} else {
		clear(ids)
	}
	*lr = LackeyReader{
		br:    br,
		own:   lr.own,
		name:  name,
		n:     windowInstructions,
		ids:   ids,
		pages: lr.pages[:0],
		stamp: lr.stamp[:0],
		win:   lr.win,
	}
	// Header.Window is a duration; an instruction count is not. The
	// convention is one instruction per nanosecond, so a window of N
	// instructions is N ns long and durations on the command line convert
	// as instruction counts (10ms = 10M instructions).
	lr.header = trace.Header{
		PageSize: LackeyPageSize,
		Window:   time.Duration(windowInstructions),
		Source:   fmt.Sprintf("valgrind lackey --trace-mem=yes log %s; window = %d instructions (header window: 1 instruction = 1ns)", name, windowInstructions),
	}
	if windowInstructions < 1 {
		lr.err = fmt.Errorf("%s: window must be at least 1 instruction, got %d", name, windowInstructions)
	}
}

// Header returns the trace header. Windows is 0: the count is known only at
// the end.
func (lr *LackeyReader) Header() trace.Header { return lr.header }

// Pages returns every page announced so far, by dense ID.
func (lr *LackeyReader) Pages() []trace.Page { return lr.pages }

// Lines returns the number of trace lines (I, L, S and M) read so far.
func (lr *LackeyReader) Lines() int64 { return lr.lines }

// Accesses returns the number of page accesses so far (an access spanning
// two pages is two), before deduplication within a window.
func (lr *LackeyReader) Accesses() int64 { return lr.acc }

// Read returns the next window, or io.EOF after the last one. The last
// window may hold fewer instructions than the others; a log with no trace
// lines has no windows.
func (lr *LackeyReader) Read() (*trace.Window, error) {
	if lr.err != nil {
		return nil, lr.err
	}
	if lr.started {
		lr.win.Reset(lr.win.Index + 1)
	} else {
		lr.win.Reset(0)
	}
	lr.started = true
	lr.instrs = 0
	have := false // the window holds at least one trace line
	if lr.pending {
		lr.pending = false
		lr.instrs = 1
		lr.touch(lr.pendAddr, lr.pendSize, true)
		have = true
	}
	for {
		line, err := lr.br.ReadSlice('\n')
		if err != nil {
			switch {
			case errors.Is(err, io.EOF) && len(line) == 0:
				lr.err = io.EOF
				if have {
					return &lr.win, nil
				}
				return nil, io.EOF
			case errors.Is(err, io.EOF):
				lr.line++
				lr.err = lineError(lr.name, lr.line, io.ErrUnexpectedEOF, "last line has no newline (truncated log?)")
			case errors.Is(err, bufio.ErrBufferFull):
				lr.line++
				lr.err = lineError(lr.name, lr.line, nil, "line longer than %d bytes; not a lackey log?", lr.br.Size())
			default:
				lr.err = lineError(lr.name, lr.line+1, err, "read")
			}
			return nil, lr.err
		}
		lr.line++
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(line) < 3 {
			if len(line) == 0 {
				continue
			}
			lr.err = lr.syntax(line, "")
			return nil, lr.err
		}
		var instr bool
		switch {
		case line[0] == 'I' && line[1] == ' ' && line[2] == ' ':
			instr = true
		case line[0] == ' ' && (line[1] == 'L' || line[1] == 'S' || line[1] == 'M') && line[2] == ' ':
		case isChatter(line):
			continue
		default:
			lr.err = lr.syntax(line, "")
			return nil, lr.err
		}
		addr, size, msg := parseAccess(line[3:])
		if msg != "" {
			lr.err = lr.syntax(line, msg)
			return nil, lr.err
		}
		lr.lines++
		if instr {
			if lr.instrs == lr.n {
				lr.pending, lr.pendAddr, lr.pendSize = true, addr, size
				return &lr.win, nil
			}
			lr.instrs++
		}
		lr.touch(addr, size, instr)
		have = true
	}
}

func (lr *LackeyReader) syntax(line []byte, msg string) error {
	if msg == "" {
		msg = "expected \"I  addr,size\", \" L addr,size\", \" S addr,size\", \" M addr,size\" or a ==PID== line"
	}
	const max = 40
	shown := line
	if len(shown) > max {
		shown = shown[:max]
	}
	return lineError(lr.name, lr.line, nil, "%s, got %q", msg, shown)
}

// isChatter reports whether line is valgrind's own output: "==123==...",
// "--123--..." or "**123**...".
func isChatter(line []byte) bool {
	c := line[0]
	if c != '=' && c != '-' && c != '*' || len(line) < 5 || line[1] != c {
		return false
	}
	i := 2
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	return i > 2 && i+1 < len(line) && line[i] == c && line[i+1] == c
}

// parseAccess parses "addr,size" with optional surrounding spaces. It
// returns a message on error.
func parseAccess(b []byte) (addr, size uint64, msg string) {
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	addr, n, ok := scanHex(b[i:])
	if !ok {
		return 0, 0, "address does not fit in 64 bits"
	}
	start := i
	i += n
	if i == start {
		return 0, 0, "expected a hexadecimal address"
	}
	if i >= len(b) || b[i] != ',' {
		return 0, 0, "expected ',' after the address"
	}
	i++
	start = i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		size = size*10 + uint64(b[i]-'0')
		if size > lackeyMaxSize {
			return 0, 0, fmt.Sprintf("access size larger than %d bytes", lackeyMaxSize)
		}
	}
	if i == start {
		return 0, 0, "expected a decimal size after ','"
	}
	for i < len(b) && b[i] == ' ' {
		i++
	}
	if i != len(b) {
		return 0, 0, "unexpected text after the size"
	}
	if size == 0 {
		return 0, 0, "access size must be at least 1"
	}
	if addr > math.MaxUint64-(size-1) {
		return 0, 0, "access runs past the end of the address space"
	}
	return addr, size, ""
}

// touch records the pages of the access [addr, addr+size) as accessed.
func (lr *LackeyReader) touch(addr, size uint64, instr bool) {
	first := addr / LackeyPageSize
	last := (addr + size - 1) / LackeyPageSize
	for pg := first; ; pg++ {
		lr.access(pg, instr)
		if pg == last {
			break
		}
	}
}

func (lr *LackeyReader) access(pg uint64, instr bool) {
	lr.acc++
	var id uint32
	switch {
	case instr && lr.iOK && lr.iPage == pg:
		id = lr.iID
	case !instr && lr.dOK && lr.dPage == pg:
		id = lr.dID
	default:
		var ok bool
		id, ok = lr.ids[pg]
		if !ok {
			id = uint32(len(lr.pages))
			lr.ids[pg] = id
			p := trace.Page{Page: pg}
			lr.pages = append(lr.pages, p)
			lr.stamp = append(lr.stamp, 0)
			lr.win.New = append(lr.win.New, p)
		}
		if instr {
			lr.iPage, lr.iID, lr.iOK = pg, id, true
		} else {
			lr.dPage, lr.dID, lr.dOK = pg, id, true
		}
	}
	if s := lr.win.Index + 1; lr.stamp[id] != s {
		lr.stamp[id] = s
		lr.win.Accessed = append(lr.win.Accessed, id)
	}
}
