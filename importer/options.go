package importer

import (
	"fmt"
	"time"

	"mdk/trace"
)

// Mapping says how a record's object id becomes pages.
type Mapping int

const (
	// MapDefault is the format's own default mapping.
	MapDefault Mapping = iota
	// MapObject makes each object id one page: page number = id. Sizes are
	// ignored.
	MapObject
	// MapBlock reads the id as an address in units of SectorSize bytes and
	// the size as a byte count: the record touches every page that the byte
	// range [id*SectorSize, id*SectorSize+max(size,1)) overlaps.
	MapBlock
)

// String returns the command-line spelling of m.
func (m Mapping) String() string {
	switch m {
	case MapObject:
		return "object"
	case MapBlock:
		return "block"
	}
	return "default"
}

// ParseMapping parses "object" or "block".
func ParseMapping(s string) (Mapping, error) {
	switch s {
	case "", "default":
		return MapDefault, nil
	case "object":
		return MapObject, nil
	case "block":
		return MapBlock, nil
	}
	return MapDefault, fmt.Errorf("unknown mapping %q (want object or block)", s)
}

// Options configures an import. The zero value, with [CSVOptions] filled in
// for CSV input, imports with the defaults documented on each field.
type Options struct {
	// PageSize is the page size in bytes, a power of two; 0 means 4096.
	PageSize int
	// Window is the window length. Timestamped records go to window
	// floor((t - t0) / Window), t0 being the first record's timestamp. With
	// WindowRequests or WindowInstructions it is only written to the trace
	// header, as the nominal length policies use to convert durations.
	// 0 means 30s.
	Window time.Duration
	// WindowRequests, if > 0, makes windows of this many records, ignoring
	// timestamps: record n (0-based) goes to window n / WindowRequests. For
	// DAMON input a record is one snapshot.
	WindowRequests int64
	// WindowInstructions, if > 0, makes windows of this many instructions,
	// for formats that count instructions (address).
	WindowInstructions int64
	// TimeUnit is the duration of one timestamp tick (csv, oracle-general);
	// 0 means the format's default (1s for both).
	TimeUnit time.Duration
	// Map is how object ids become pages; MapDefault means the format's
	// default.
	Map Mapping
	// SectorSize is the byte size of one id unit under MapBlock; 0 means the
	// format's default (512 for csv and oracle-general, 1 for address).
	SectorSize int64
	// AllowBackwards puts a record whose timestamp falls in a window before
	// the current one into the current window (counting it in
	// Stats.Backwards) instead of failing.
	AllowBackwards bool
	// MaxWindows bounds the number of windows; 0 means DefaultMaxWindows.
	MaxWindows int64
	// MaxRecordPages bounds the pages one record may touch; 0 means
	// DefaultMaxRecordPages.
	MaxRecordPages int64
	// Compression is one of the Compress constants; "" means auto.
	Compression string
	// CSV configures the csv and txt formats.
	CSV CSVOptions
	// BigEndian reads lbn32 input as big-endian.
	BigEndian bool
	// Source, if not empty, replaces the trace header's description.
	Source string
}

// DefaultMaxRecordPages bounds the pages one record may touch by default:
// 2^22 pages are 16 GiB of 4 KiB pages.
const DefaultMaxRecordPages = 1 << 22

// Stats summarises an import.
type Stats struct {
	Records   int64 // records read (requests, lines, snapshots)
	Accesses  int64 // page accesses, before deduplication within a window
	Pages     int64 // distinct pages
	Windows   int64 // windows written
	Backwards int64 // records moved forward by AllowBackwards
}

func (o *Options) pageSize() (uint64, error) {
	ps := o.PageSize
	if ps == 0 {
		ps = trace.DefaultPageSize
	}
	if ps <= 0 || ps&(ps-1) != 0 {
		return 0, fmt.Errorf("page size %d is not a positive power of two", ps)
	}
	return uint64(ps), nil
}

func (o *Options) window() time.Duration {
	if o.Window == 0 {
		return trace.DefaultWindow
	}
	return o.Window
}

func (o *Options) maxRecordPages() uint64 {
	if o.MaxRecordPages <= 0 {
		return DefaultMaxRecordPages
	}
	return uint64(o.MaxRecordPages)
}

// header returns the header of the imported trace.
func (o *Options) header(source string) trace.Header {
	h := trace.DefaultHeader()
	ps, _ := o.pageSize()
	h.PageSize = int(ps)
	h.Window = o.window()
	h.Source = source
	if o.Source != "" {
		h.Source = o.Source
	}
	return h
}
