package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
)

// address is the memory-reference trace of the UCSD CSE240A project, shipped
// with Caffeine's simulator (gzip.trace.gz and others): one reference per
// line, "l|s 0xADDR N", where N is the number of instructions executed since
// the previous memory reference.
var addressFormat = &Format{
	Name:         "address",
	Short:        `memory references "l|s 0xADDR N" (N: instructions since the previous reference); pages by byte address`,
	Instructions: true,
	Map:          MapBlock,
	SectorSize:   1,
	newScanner: func(r io.Reader, name string, o *Options) (recordScanner, error) {
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 64<<10), maxLine)
		return &addressScanner{s: s, name: name}, nil
	},
}

type addressScanner struct {
	s     *bufio.Scanner
	name  string
	line  int64
	instr uint64 // running sum of field 3
	rec   Record
	err   error
}

func (s *addressScanner) Record() *Record { return &s.rec }
func (s *addressScanner) Err() error      { return s.err }

func (s *addressScanner) Scan() bool {
	if s.err != nil {
		return false
	}
	for s.s.Scan() {
		s.line++
		b := bytes.TrimSuffix(s.s.Bytes(), []byte{'\r'})
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
		s.err = lineError(s.name, s.line+1, err, "read")
	}
	return false
}

func (s *addressScanner) parse(b []byte) error {
	var f [4][]byte
	n := 0
	for n < len(f) {
		b = bytes.TrimLeft(b, " \t")
		if len(b) == 0 {
			break
		}
		i := bytes.IndexAny(b, " \t")
		if i < 0 {
			i = len(b)
		}
		f[n], b = b[:i], b[i:]
		n++
	}
	if n != 3 {
		return lineError(s.name, s.line, nil, `expected 3 fields "l|s 0xADDR N", found %d`, n)
	}
	if len(f[0]) != 1 || (f[0][0] != 'l' && f[0][0] != 's') {
		return lineError(s.name, s.line, nil, "expected l (load) or s (store), got %q", f[0])
	}
	if len(f[1]) < 3 || f[1][0] != '0' || (f[1][1] != 'x' && f[1][1] != 'X') {
		return lineError(s.name, s.line, nil, "expected a 0x-prefixed hex address, got %q", f[1])
	}
	addr, ok := parseHex(f[1][2:])
	if !ok {
		return lineError(s.name, s.line, nil, "expected a 0x-prefixed hex address of at most 64 bits, got %q", f[1])
	}
	gap, ok := parseUint(f[2])
	if !ok {
		return lineError(s.name, s.line, nil, "expected a non-negative instruction count, got %q", f[2])
	}
	if gap > math.MaxInt64-s.instr {
		return lineError(s.name, s.line, nil, "instruction count overflows: %s", fmt.Sprint(gap))
	}
	s.instr += gap
	s.rec = Record{Line: s.line, ID: addr, Size: 1, Time: int64(s.instr)}
	return nil
}
