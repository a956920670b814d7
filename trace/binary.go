package trace

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// The binary trace format, version 1, is specified in docs/trace-format.md.
// binary_writer.go and binary_reader.go implement it; this file holds what
// both share.

// BinaryMagic is the first eight bytes of every binary trace.
const BinaryMagic = "\x89MDKT\r\n\x1a"

// BinaryVersion is the binary format version this package writes and reads.
const BinaryVersion = 1

// BinarySampledVersion is the version of a sampled trace's file: version 1
// with the sample's rate and seed in the header (docs/trace-format.md). An
// mdk that knows only version 1 rejects it rather than read its counts as
// a whole trace's.
const BinarySampledVersion = 2

// Limits of the binary format (docs/trace-format.md, "Limits").
const (
	maxHeaderBytes = 1 << 20
	maxBlockBytes  = 1 << 28 // compressed and decompressed payload
	maxPages       = 1<<32 - 1
	maxWindows     = 1<<32 - 1
)

// Block tags and sizes.
const (
	tagWindow       = 'W'
	tagEnd          = 'E'
	blockHeaderSize = 17 // tag, index, U, C, crc
	endBlockSize    = 9  // tag, W, crc
)

var (
	// ErrChecksum is wrapped by a [CorruptError] whose block failed its CRC.
	ErrChecksum = errors.New("trace: checksum mismatch")
	// ErrVersion is wrapped by the error for a binary trace of a version this
	// package does not know.
	ErrVersion = errors.New("trace: unsupported binary format version")
)

// CorruptError reports a damaged, truncated or foreign binary trace.
//
// Every window before LastWindow+1 was intact and has been returned by
// Read. Err, when set, is the underlying cause: [io.ErrUnexpectedEOF] for a
// truncated file, [ErrChecksum], [ErrVersion], or a decompression error.
type CorruptError struct {
	File       string // name given to the reader
	Offset     int64  // byte offset of the damaged element
	LastWindow int    // last intact window, -1 if none
	Msg        string // what was wrong
	Err        error
}

func (e *CorruptError) Error() string {
	last := "no intact window"
	if e.LastWindow >= 0 {
		last = fmt.Sprintf("last intact window %d", e.LastWindow)
	}
	return fmt.Sprintf("%s: byte offset %d: %s (%s)", e.File, e.Offset, e.Msg, last)
}

func (e *CorruptError) Unwrap() error { return e.Err }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var binaryFormat = &Format{
	Name:  "binary",
	Exts:  []string{".mdkt"},
	Magic: []byte(BinaryMagic),
	NewReader: func(r io.Reader, name string) (Reader, error) {
		return NewBinaryReader(r, name)
	},
	NewWriter: func(w io.Writer, h Header) (Writer, error) {
		return NewBinaryWriter(w, h)
	},
}

// The zstd coders are shared: EncodeAll and DecodeAll are safe for
// concurrent use and keep internal pools, and creating them is costly.
var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdCoders() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderCRC(false),
			zstd.WithZeroFrames(true))
		if zstdErr != nil {
			return
		}
		zstdDec, zstdErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(0),
			zstd.WithDecoderMaxMemory(maxBlockBytes),
			zstd.WithDecoderMaxWindow(maxBlockBytes))
	})
	return zstdEnc, zstdDec, zstdErr
}

// Summary is what a full read of a trace found, as `mdk check` prints it.
type Summary struct {
	Header   Header
	Windows  int   // intact windows read
	Pages    int   // distinct pages announced in them
	Accesses int64 // access records
	Births   int64
	Frees    int64
	Err      error // the first damage; nil when the whole trace is intact
}

// Check reads r to its end or to its first damage, counting what is intact.
// If salvage is not nil every intact window is also written to it, and it is
// closed at the end, so it holds the intact prefix as a valid trace. The
// returned error is a salvage write error; damage is in Summary.Err.
func Check(r Reader, salvage Writer) (Summary, error) {
	s := Summary{Header: r.Header()}
	for {
		win, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.Err = err
			break
		}
		s.Windows++
		s.Accesses += int64(len(win.Accessed))
		s.Births += int64(len(win.Born))
		s.Frees += int64(len(win.Freed))
		if salvage != nil {
			if err := salvage.WriteWindow(win); err != nil {
				s.Pages = len(r.Pages())
				return s, err
			}
		}
	}
	s.Pages = len(r.Pages())
	if salvage != nil {
		return s, salvage.Close()
	}
	return s, nil
}
