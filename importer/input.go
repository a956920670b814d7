package importer

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Compression names accepted by [Options.Compression].
const (
	CompressAuto  = "auto" // detect by magic bytes (the default)
	CompressNone  = "none"
	CompressGzip  = "gzip"
	CompressXZ    = "xz"
	CompressZstd  = "zstd"
	CompressBzip2 = "bzip2"
	CompressZlib  = "zlib"
)

var (
	magicGzip  = []byte{0x1f, 0x8b}
	magicXZ    = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicZstd  = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicBzip2 = []byte("BZh")
	bzipBlock  = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
	bzipEnd    = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
)

// detectCompression tells the compression of the stream starting with head.
// zlib is only recognised when allowZlib is set: its two-byte magic is too
// weak to tell from text that starts with "x".
func detectCompression(head []byte, allowZlib bool) string {
	switch {
	case bytes.HasPrefix(head, magicGzip):
		return CompressGzip
	case bytes.HasPrefix(head, magicXZ):
		return CompressXZ
	case bytes.HasPrefix(head, magicZstd):
		return CompressZstd
	case len(head) >= 10 && bytes.HasPrefix(head, magicBzip2) && head[3] >= '1' && head[3] <= '9' &&
		(bytes.Equal(head[4:10], bzipBlock) || bytes.Equal(head[4:10], bzipEnd)):
		return CompressBzip2
	case allowZlib && len(head) >= 2 && head[0]&0x0f == 8 && head[0]>>4 <= 7 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0:
		return CompressZlib
	}
	return CompressNone
}

// Decompress returns a reader of the decompressed bytes of r, telling the
// compression by its magic bytes when mode is "" or "auto" (zlib is not
// recognised automatically). It also returns the compression found and a
// function that releases decoder resources.
func Decompress(r io.Reader, name, mode string) (io.Reader, string, func(), error) {
	return decompress(r, name, mode, false)
}

// decompress returns a reader of the decompressed bytes of r. mode is one
// of the Compress constants. The returned closer releases decoder resources.
func decompress(r io.Reader, name, mode string, allowZlib bool) (io.Reader, string, func(), error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if mode == "" || mode == CompressAuto {
		head, _ := br.Peek(10)
		mode = detectCompression(head, allowZlib)
	}
	nop := func() {}
	var (
		out io.Reader
		err error
	)
	switch mode {
	case CompressNone:
		return br, mode, nop, nil
	case CompressGzip:
		out, err = gzip.NewReader(br)
	case CompressXZ:
		out, err = xz.NewReader(br)
	case CompressBzip2:
		out = bzip2.NewReader(br)
	case CompressZlib:
		out, err = zlib.NewReader(br)
	case CompressZstd:
		d, derr := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if derr != nil {
			return nil, mode, nop, fmt.Errorf("%s: zstd: %w", name, derr)
		}
		return bufio.NewReaderSize(d, 64<<10), mode, d.Close, nil
	default:
		return nil, mode, nop, &OptionError{fmt.Errorf("unknown compression %q (known: auto, none, gzip, xz, zstd, bzip2, zlib)", mode)}
	}
	if err != nil {
		return nil, mode, nop, &SyntaxError{Name: name, Offset: 0, Msg: "bad " + mode + " header", Err: err}
	}
	return bufio.NewReaderSize(&decompressErr{r: out, mode: mode}, 64<<10), mode, nop, nil
}

// decompressErr names the decompressor in its errors.
type decompressErr struct {
	r    io.Reader
	mode string
}

func (d *decompressErr) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && err != io.EOF && !strings.HasPrefix(err.Error(), d.mode) {
		err = fmt.Errorf("%s: %w", d.mode, err)
	}
	return n, err
}
