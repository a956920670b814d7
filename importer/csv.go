package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// CSVOptions maps the columns of a libCacheSim-style CSV or TXT trace.
// Columns are numbered from 1, as in libCacheSim's
// -t "time-col=2, obj-id-col=5, obj-size-col=4"; 0 means absent.
type CSVOptions struct {
	TimeCol int // timestamp column (integer ticks of Options.TimeUnit)
	IDCol   int // object id column (required)
	SizeCol int // size column, in bytes (used by the block mapping)
	// Header says the first line is a header and is skipped.
	Header bool
	// Delimiter separates fields; 0 means ','. A space means runs of spaces
	// and tabs. Quotes are not interpreted.
	Delimiter byte
	// IDIsString reads ids as strings, interned to 0, 1, 2, ... in order of
	// first appearance; otherwise ids are unsigned integers (decimal, or hex
	// with 0x).
	IDIsString bool
}

// String formats c in libCacheSim's -t syntax.
func (c CSVOptions) String() string {
	var parts []string
	if c.TimeCol > 0 {
		parts = append(parts, fmt.Sprintf("time-col=%d", c.TimeCol))
	}
	parts = append(parts, fmt.Sprintf("obj-id-col=%d", c.IDCol))
	if c.SizeCol > 0 {
		parts = append(parts, fmt.Sprintf("obj-size-col=%d", c.SizeCol))
	}
	parts = append(parts, fmt.Sprintf("obj-id-is-num=%t", !c.IDIsString), fmt.Sprintf("has-header=%t", c.Header))
	d := c.Delimiter
	if d == 0 {
		d = ','
	}
	if d == ' ' {
		parts = append(parts, "delimiter=space")
	} else {
		parts = append(parts, fmt.Sprintf("delimiter=%c", d))
	}
	return strings.Join(parts, ", ")
}

// ParseParams sets c from a libCacheSim -t parameter string such as
// "time-col=2, obj-id-col=5, obj-size-col=4, obj-id-is-num=true,
// has-header=true, delimiter=,". Keys not given keep their value. Keys
// libCacheSim knows but mdk does not use (op-col, ttl-col, cnt-col,
// tenant-col, next-access-col, feature-cols) are rejected, so that nobody
// believes they took effect.
func (c *CSVOptions) ParseParams(s string) error {
	s = fixDelimiterParam(s)
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("trace parameter %q: want key=value", kv)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		var err error
		switch k {
		case "time-col":
			c.TimeCol, err = parseCol(v)
		case "obj-id-col":
			c.IDCol, err = parseCol(v)
		case "obj-size-col":
			c.SizeCol, err = parseCol(v)
		case "has-header", "header":
			c.Header, err = strconv.ParseBool(v)
		case "obj-id-is-num":
			var num bool
			num, err = strconv.ParseBool(v)
			c.IDIsString = !num
		case "delimiter":
			c.Delimiter, err = parseDelimiter(v)
		default:
			return fmt.Errorf("trace parameter %q: unknown or unsupported key %q (known: time-col, obj-id-col, obj-size-col, has-header, obj-id-is-num, delimiter)", kv, k)
		}
		if err != nil {
			return fmt.Errorf("trace parameter %q: %v", kv, err)
		}
	}
	return nil
}

// fixDelimiterParam turns "delimiter=," (which ParseParams would split at
// the comma) into "delimiter=comma".
func fixDelimiterParam(s string) string {
	return strings.NewReplacer("delimiter=,", "delimiter=comma", "delimiter= ,", "delimiter=comma").Replace(s)
}

func parseCol(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a column number (1-based, 0 for none), got %q", v)
	}
	return n, nil
}

// ParseDelimiter parses a delimiter name: a single character, or one of
// comma, tab, space (runs of spaces and tabs), semicolon, pipe.
func ParseDelimiter(v string) (byte, error) { return parseDelimiter(v) }

func parseDelimiter(v string) (byte, error) {
	switch v {
	case "comma", "":
		return ',', nil
	case "tab", `\t`, "\t":
		return '\t', nil
	case "space", " ":
		return ' ', nil
	case "semicolon":
		return ';', nil
	case "pipe":
		return '|', nil
	}
	if len(v) == 1 && v[0] != '\n' && v[0] != '\r' {
		return v[0], nil
	}
	return 0, fmt.Errorf("want one character or comma, tab, space, semicolon, pipe; got %q", v)
}

func (c *CSVOptions) check(format string, o *Options) error {
	if format == "txt" {
		if c.IDCol == 0 {
			c.IDCol = 1
		}
		if c.Delimiter == 0 {
			c.Delimiter = ' '
		}
	}
	if c.Delimiter == 0 {
		c.Delimiter = ','
	}
	if c.IDCol <= 0 {
		return fmt.Errorf("format %s needs the object id column (--obj-id-col N)", format)
	}
	if c.TimeCol == 0 && o.WindowRequests == 0 {
		return fmt.Errorf("no time column: give --time-col N (with --window) or --window-requests N")
	}
	if c.IDIsString && o.Map == MapBlock {
		return fmt.Errorf("the block mapping needs numeric object ids")
	}
	if c.SizeCol == 0 && o.Map == MapBlock {
		return fmt.Errorf("the block mapping needs a size column (--obj-size-col N)")
	}
	return nil
}

var csvFormat = &Format{
	Name:       "csv",
	Short:      "libCacheSim CSV: columns chosen by --time-col, --obj-id-col, --obj-size-col",
	Timed:      true,
	Map:        MapObject,
	SectorSize: 512,
	TimeUnit:   time.Second,
	newScanner: newCSVScanner,
}

var txtFormat = &Format{
	Name:       "txt",
	Short:      "libCacheSim TXT: one object id per line (a CSV with whitespace delimiter, id in column 1)",
	Timed:      true,
	Map:        MapObject,
	SectorSize: 512,
	TimeUnit:   time.Second,
	newScanner: newCSVScanner,
}

// maxLine bounds a text line.
const maxLine = 1 << 20

type csvScanner struct {
	s      *bufio.Scanner
	name   string
	c      CSVOptions
	o      *Options
	maxCol int
	fields [][]byte
	cols   [3][]byte // time, id, size
	rec    Record
	line   int64
	intern map[string]uint64
	err    error
}

func newCSVScanner(r io.Reader, name string, o *Options) (recordScanner, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), maxLine)
	c := o.CSV
	return &csvScanner{s: s, name: name, c: c, o: o, maxCol: max(c.TimeCol, c.IDCol, c.SizeCol), intern: map[string]uint64{}}, nil
}

func (s *csvScanner) Record() *Record { return &s.rec }
func (s *csvScanner) Err() error      { return s.err }

func (s *csvScanner) Scan() bool {
	if s.err != nil {
		return false
	}
	for s.s.Scan() {
		s.line++
		b := s.s.Bytes()
		if s.line == 1 && s.c.Header {
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if err := s.parse(b); err != nil {
			s.err = err
			return false
		}
		return true
	}
	if err := s.s.Err(); err != nil {
		msg := "read"
		if err == bufio.ErrTooLong {
			msg = fmt.Sprintf("line longer than %d bytes", maxLine)
		}
		s.err = lineError(s.name, s.line+1, err, "%s", msg)
	}
	return false
}

func (s *csvScanner) parse(b []byte) error {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	s.fields = s.fields[:0]
	for len(s.fields) < s.maxCol {
		var f []byte
		if s.c.Delimiter == ' ' {
			b = bytes.TrimLeft(b, " \t")
			if len(b) == 0 {
				break
			}
			i := bytes.IndexAny(b, " \t")
			if i < 0 {
				f, b = b, nil
			} else {
				f, b = b[:i], b[i:]
			}
		} else {
			if b == nil {
				break
			}
			i := bytes.IndexByte(b, s.c.Delimiter)
			if i < 0 {
				f, b = b, nil
			} else {
				f, b = b[:i], b[i+1:]
			}
		}
		s.fields = append(s.fields, bytes.Trim(f, " \t"))
	}
	col := len(s.fields)
	if col < s.maxCol {
		return lineError(s.name, s.line, nil, "found %d field(s), expected at least %d (%s)", col, s.maxCol, s.c.String())
	}
	hint := ""
	if s.line == 1 && !s.c.Header {
		hint = " (if line 1 is a header, use --header)"
	}
	s.rec = Record{Line: s.line}
	if s.c.TimeCol > 0 {
		s.cols[0] = s.fields[s.c.TimeCol-1]
		t, ok := parseInt(s.cols[0])
		if !ok {
			return lineError(s.name, s.line, nil, "time column %d: expected an integer timestamp, got %q%s", s.c.TimeCol, s.cols[0], hint)
		}
		s.rec.Time = t
	}
	s.cols[1] = s.fields[s.c.IDCol-1]
	if s.c.IDIsString {
		id, ok := s.intern[string(s.cols[1])]
		if !ok {
			id = uint64(len(s.intern))
			s.intern[string(s.cols[1])] = id
		}
		s.rec.ID = id
	} else {
		id, ok := parseUint(s.cols[1])
		if !ok {
			return lineError(s.name, s.line, nil, "object id column %d: expected an unsigned integer (decimal or 0x hex), got %q%s", s.c.IDCol, s.cols[1], hint)
		}
		s.rec.ID = id
	}
	if s.c.SizeCol > 0 {
		s.cols[2] = s.fields[s.c.SizeCol-1]
		sz, ok := parseUint(s.cols[2])
		if !ok {
			return lineError(s.name, s.line, nil, "size column %d: expected a byte count, got %q%s", s.c.SizeCol, s.cols[2], hint)
		}
		s.rec.Size = sz
	}
	return nil
}

// parseUint parses a decimal or 0x-prefixed hex unsigned 64-bit integer.
func parseUint(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		return parseHex(b[2:])
	}
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseHex parses hex digits without a prefix: at most 16 of them.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	v, n, ok := scanHex(b)
	return v, ok && n == len(b)
}

// scanHex parses the run of hex digits (no prefix) that b starts with: its
// value and length. ok is false if the value does not fit in 64 bits
// (leading zeros are allowed).
func scanHex(b []byte) (v uint64, n int, ok bool) {
	for ; n < len(b); n++ {
		c := b[n]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return v, n, true
		}
		if v>>60 != 0 {
			return 0, n, false
		}
		v = v<<4 | uint64(d)
	}
	return v, n, true
}

// parseInt parses a decimal signed 64-bit integer.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) > 0 && b[0] == '0' && len(b) > 1 && (b[1] == 'x' || b[1] == 'X') {
		return 0, false
	}
	u, ok := parseUint(b)
	if !ok {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}
