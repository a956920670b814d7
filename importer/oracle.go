package importer

import (
	"bufio"
	"encoding/binary"
	"io"
	"time"
)

// oracleGeneral is libCacheSim's binary trace (traceConv output): headerless
// packed 24-byte little-endian records, Python struct "<IQIq":
//
//	offset 0  uint32 clock_time         seconds
//	offset 4  uint64 obj_id
//	offset 12 uint32 obj_size           bytes (traceConv fixes each object's
//	                                    size at the size of its first request)
//	offset 16 int64  next_access_vtime  ignored
const oracleRecordSize = 24

var oracleFormat = &Format{
	Name:       "oracle-general",
	Short:      "libCacheSim oracleGeneral binary: 24-byte little-endian records <IQIq (time, id, size, next access)",
	Timed:      true,
	Map:        MapObject,
	SectorSize: 512,
	TimeUnit:   time.Second,
	newScanner: func(r io.Reader, name string, o *Options) (recordScanner, error) {
		return &fixedScanner{r: bufio.NewReaderSize(r, 64<<10), name: name, size: oracleRecordSize, decode: decodeOracle}, nil
	},
}

func decodeOracle(b []byte, rec *Record) {
	rec.Time = int64(binary.LittleEndian.Uint32(b[0:]))
	rec.ID = binary.LittleEndian.Uint64(b[4:])
	rec.Size = uint64(binary.LittleEndian.Uint32(b[12:]))
}

// lbn32 is an array of packed uint32 block numbers (the LIRS2 / CloudPhysics
// w*.trace files): no header, time, size or operation.
var lbn32Format = &Format{
	Name:       "lbn32",
	Short:      "packed uint32 block numbers, little-endian (--big-endian), no timestamps",
	Map:        MapObject,
	SectorSize: 512,
	newScanner: func(r io.Reader, name string, o *Options) (recordScanner, error) {
		dec := func(b []byte, rec *Record) { rec.ID = uint64(binary.LittleEndian.Uint32(b)) }
		if o.BigEndian {
			dec = func(b []byte, rec *Record) { rec.ID = uint64(binary.BigEndian.Uint32(b)) }
		}
		return &fixedScanner{r: bufio.NewReaderSize(r, 64<<10), name: name, size: 4, decode: dec}, nil
	},
}

// fixedScanner reads fixed-size binary records.
type fixedScanner struct {
	r      *bufio.Reader
	name   string
	size   int
	decode func([]byte, *Record)
	buf    [oracleRecordSize]byte
	off    int64
	rec    Record
	err    error
}

func (s *fixedScanner) Record() *Record { return &s.rec }
func (s *fixedScanner) Err() error      { return s.err }

func (s *fixedScanner) Scan() bool {
	if s.err != nil {
		return false
	}
	b := s.buf[:s.size]
	n, err := io.ReadFull(s.r, b)
	switch {
	case err == io.EOF:
		return false
	case err == io.ErrUnexpectedEOF:
		s.err = offsetError(s.name, s.off, err, "truncated record: %d of %d bytes", n, s.size)
		return false
	case err != nil:
		s.err = offsetError(s.name, s.off+int64(n), err, "read")
		return false
	}
	s.rec = Record{Offset: s.off}
	s.decode(b, &s.rec)
	s.off += int64(s.size)
	return true
}
