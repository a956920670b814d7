package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"mdk/trace"
)

// Record is one request of a record-oriented trace, as a format scanner
// returns it.
type Record struct {
	Time   int64  // timestamp in the format's ticks (or running instruction count)
	ID     uint64 // object id, block number or byte address
	Size   uint64 // request size in bytes; 0 when the format has none
	Line   int64  // 1-based line of the record in text formats; 0 in binary ones
	Offset int64  // byte offset of the record in binary formats
}

// recordScanner reads one record at a time. Record returns storage owned by
// the scanner, valid until the next Scan.
type recordScanner interface {
	Scan() bool
	Record() *Record
	Err() error
}

// Format is one input format.
type Format struct {
	Name         string
	Short        string        // one line for help text
	Timed        bool          // records carry timestamps
	Instructions bool          // records carry instruction counts
	Map          Mapping       // default mapping (record formats)
	SectorSize   int64         // default id unit for MapBlock
	TimeUnit     time.Duration // default timestamp tick
	allowZlib    bool          // recognise zlib streams by magic

	newScanner func(r io.Reader, name string, o *Options) (recordScanner, error)
	// run imports a format that is not a stream of records (DAMON).
	run func(ctx context.Context, r io.Reader, name string, o *Options, w *Windower, st *Stats) error
	// newReader reads a format whose reader makes the windows and the
	// header itself (lackey).
	newReader func(r io.Reader, name string, o *Options) trace.Reader
}

var formats = []*Format{csvFormat, txtFormat, oracleFormat, addressFormat, lbn32Format, damonFormat, damonPerfFormat, lackeyFormat}

// Formats returns the known input formats.
func Formats() []*Format { return formats }

// FormatByName returns the input format called name.
func FormatByName(name string) (*Format, error) {
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	var names []string
	for _, f := range formats {
		names = append(names, f.Name)
	}
	return nil, fmt.Errorf("unknown import format %q (known: %s)", name, strings.Join(names, ", "))
}

// Import reads r, a trace in format, and writes it as an mdk trace to the
// writer that newWriter returns for the trace's header. name is used in
// error messages and in the header's Source. The writer is closed on
// success; on error it is left unclosed, and the caller should discard the
// output.
func Import(ctx context.Context, format string, r io.Reader, name string, o Options, newWriter func(trace.Header) (trace.Writer, error)) (Stats, error) {
	var st Stats
	f, err := FormatByName(format)
	if err != nil {
		return st, &OptionError{err}
	}
	if err := f.check(&o); err != nil {
		return st, &OptionError{err}
	}
	in, comp, release, err := decompress(r, name, o.Compression, f.allowZlib)
	if err != nil {
		return st, err
	}
	defer release()
	if comp != CompressNone {
		name += " (" + comp + ")"
	}
	if f.newReader != nil {
		return copyWindows(ctx, f.newReader(in, name, &o), o.MaxWindows, newWriter)
	}
	tw, err := newWriter(o.header(f.describe(name, &o)))
	if err != nil {
		return st, err
	}
	w := NewWindower(tw, o.MaxWindows)
	if f.run != nil {
		err = f.run(ctx, in, name, &o, w, &st)
	} else {
		var sc recordScanner
		sc, err = f.newScanner(in, name, &o)
		if err == nil {
			err = f.runRecords(ctx, sc, name, &o, w, &st)
		}
	}
	st.Accesses, st.Pages, st.Windows = w.Accesses(), w.Pages(), w.Windows()
	if err != nil {
		return st, err
	}
	err = w.Close()
	st.Windows = w.Windows()
	return st, err
}

// copyWindows writes the windows of r, with r's header, to the writer
// newWriter returns. Records and accesses are r's count of them (lackey's
// trace lines and page accesses).
func copyWindows(ctx context.Context, r trace.Reader, maxWindows int64, newWriter func(trace.Header) (trace.Writer, error)) (st Stats, err error) {
	if maxWindows <= 0 {
		maxWindows = DefaultMaxWindows
	}
	tw, err := newWriter(r.Header())
	if err != nil {
		return st, err
	}
	if c, ok := r.(interface {
		Lines() int64
		Accesses() int64
	}); ok {
		defer func() { st.Records, st.Accesses = c.Lines(), c.Accesses() }()
	}
	for {
		win, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return st, err
		}
		if st.Windows >= maxWindows {
			return st, fmt.Errorf("%d windows, beyond the limit of %d (--max-windows)", st.Windows+1, maxWindows)
		}
		if err := tw.WriteWindow(win); err != nil {
			return st, err
		}
		st.Windows++
		st.Pages += int64(len(win.New))
	}
	return st, tw.Close()
}

// check validates o against f and fills in f's defaults.
func (f *Format) check(o *Options) error {
	if _, err := o.pageSize(); err != nil {
		return err
	}
	if o.Window < 0 {
		return fmt.Errorf("negative window %v", o.Window)
	}
	if o.WindowRequests < 0 || o.WindowInstructions < 0 {
		return fmt.Errorf("negative window size")
	}
	if o.WindowRequests > 0 && o.WindowInstructions > 0 {
		return fmt.Errorf("give at most one of --window-requests and --window-instructions")
	}
	if f == lackeyFormat {
		switch {
		case o.WindowRequests > 0:
			return fmt.Errorf("lackey windows are counted in instructions: use --window-instructions, not --window-requests")
		case o.PageSize != 0 && o.PageSize != LackeyPageSize:
			return fmt.Errorf("lackey traces have %d-byte pages: page size %d is not supported", LackeyPageSize, o.PageSize)
		case o.WindowInstructions == 0:
			o.WindowInstructions = DefaultWindowInstructions
		}
	}
	if o.WindowInstructions > 0 && !f.Instructions {
		return fmt.Errorf("format %s has no instruction counts; use --window-requests or --window", f.Name)
	}
	if o.Map == MapDefault {
		o.Map = f.Map
	}
	if o.Map == MapDefault {
		o.Map = MapObject
	}
	if o.SectorSize == 0 {
		o.SectorSize = f.SectorSize
	}
	if o.SectorSize <= 0 {
		o.SectorSize = 512
	}
	if o.TimeUnit == 0 {
		o.TimeUnit = f.TimeUnit
	}
	if o.TimeUnit <= 0 {
		o.TimeUnit = time.Second
	}
	if f.Timed && o.WindowRequests == 0 && o.WindowInstructions == 0 {
		if o.window()%o.TimeUnit != 0 {
			return fmt.Errorf("window %v is not a whole number of time units (%v)", o.window(), o.TimeUnit)
		}
	}
	if !f.Timed && o.WindowRequests == 0 && o.WindowInstructions == 0 {
		what := "--window-requests N"
		if f.Instructions {
			what += " or --window-instructions N"
		}
		return fmt.Errorf("format %s has no timestamps; give %s", f.Name, what)
	}
	if f.Name == "csv" || f.Name == "txt" {
		return o.CSV.check(f.Name, o)
	}
	return nil
}

// describe is the trace header's Source.
func (f *Format) describe(name string, o *Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mdk import %s %s:", f.Name, name)
	if f.Name == "csv" || f.Name == "txt" {
		fmt.Fprintf(&b, " %s;", o.CSV.String())
	}
	if f.run == nil {
		if o.Map == MapBlock {
			fmt.Fprintf(&b, " block mapping, %d-byte sectors;", o.SectorSize)
		} else {
			b.WriteString(" object mapping (one page per id);")
		}
	}
	switch {
	case o.WindowRequests > 0:
		fmt.Fprintf(&b, " windows of %d records", o.WindowRequests)
	case o.WindowInstructions > 0:
		fmt.Fprintf(&b, " windows of %d instructions", o.WindowInstructions)
	default:
		fmt.Fprintf(&b, " windows of %v from the first timestamp", o.window())
		if f.run == nil {
			fmt.Fprintf(&b, " (time unit %v)", o.TimeUnit)
		}
	}
	return b.String()
}

// clock maps a record to its window.
type clock struct {
	per     uint64 // ticks or records per window
	byCount bool   // window by record count
	started bool
	t0      int64
	n       uint64 // records seen
}

func newClock(o *Options, timed bool) clock {
	switch {
	case o.WindowRequests > 0:
		return clock{per: uint64(o.WindowRequests), byCount: true}
	case o.WindowInstructions > 0:
		return clock{per: uint64(o.WindowInstructions), started: true}
	}
	return clock{per: uint64(o.window() / o.TimeUnit)}
}

// window returns the window of a record with timestamp t; ok is false when
// t is before the first timestamp.
func (c *clock) window(t int64) (w int64, ok bool) {
	n := c.n
	c.n++
	if c.byCount {
		return int64(n / c.per), true
	}
	if !c.started {
		c.started, c.t0 = true, t
	}
	if t < c.t0 {
		return 0, false
	}
	d := (uint64(t) - uint64(c.t0)) / c.per
	if d > math.MaxInt64 {
		d = math.MaxInt64 // beyond any window limit; Advance reports it
	}
	return int64(d), true
}

// place moves w to the window of a record that clock puts at win (ok false:
// before the first timestamp) and returns the window to use.
func place(w *Windower, o *Options, st *Stats, win int64, ok bool, pos func(error, string, ...any) error, t int64) (int64, error) {
	if ok && win >= w.Current() {
		if err := w.Advance(win); err != nil {
			if errors.Is(err, ErrTooManyWindows) {
				return 0, pos(nil, "timestamp %d is in window %d, beyond the limit of %d windows (check the time unit and --window)", t, win, w.maxWindows)
			}
			return 0, pos(err, "write window")
		}
		return win, nil
	}
	if o.AllowBackwards {
		st.Backwards++
		return max(w.Current(), 0), nil
	}
	if !ok {
		return 0, pos(nil, "timestamp %d is before the first timestamp; mdk import needs non-decreasing time (sort the input, or use --allow-backwards to put late records in the current window)", t)
	}
	return 0, pos(nil, "timestamp %d falls in window %d, but window %d has begun; mdk import needs non-decreasing time (sort the input, or use --allow-backwards to put late records in the current window)", t, win, w.Current())
}

// runRecords imports a record-oriented format: each record is placed in its
// window and mapped to pages.
func (f *Format) runRecords(ctx context.Context, sc recordScanner, name string, o *Options, w *Windower, st *Stats) error {
	ps, _ := o.pageSize()
	ss := uint64(o.SectorSize)
	maxPages := o.maxRecordPages()
	clk := newClock(o, f.Timed)
	var rec *Record
	pos := func(err error, format string, args ...any) error {
		if rec.Line > 0 {
			return lineError(name, rec.Line, err, format, args...)
		}
		return offsetError(name, rec.Offset, err, format, args...)
	}
	for sc.Scan() {
		rec = sc.Record()
		st.Records++
		if st.Records&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		win, ok := clk.window(rec.Time)
		win, err := place(w, o, st, win, ok, pos, rec.Time)
		if err != nil {
			return err
		}
		if o.Map == MapObject {
			if err := w.Access(win, trace.Page{Page: rec.ID}); err != nil {
				return pos(err, "add page")
			}
			continue
		}
		if rec.ID > math.MaxUint64/ss {
			return pos(nil, "block %d times sector size %d overflows a 64-bit byte address", rec.ID, ss)
		}
		start := rec.ID * ss
		size := max(rec.Size, 1)
		if size-1 > math.MaxUint64-start {
			return pos(nil, "request of %d bytes at byte %d overflows a 64-bit byte address", rec.Size, start)
		}
		first, last := start/ps, (start+size-1)/ps
		if last-first >= maxPages {
			return pos(nil, "request of %d bytes spans %d pages, more than the limit of %d", rec.Size, last-first+1, maxPages)
		}
		if err := w.AccessRange(win, 0, first, last); err != nil {
			return pos(err, "add pages")
		}
	}
	return sc.Err()
}
