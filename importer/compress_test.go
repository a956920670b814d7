package importer

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// compress returns data compressed with comp.
func compress(t testing.TB, comp string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	var err error
	switch comp {
	case CompressGzip:
		w = gzip.NewWriter(&buf)
	case CompressZlib:
		w = zlib.NewWriter(&buf)
	case CompressXZ:
		w, err = xz.NewWriter(&buf)
	case CompressZstd:
		w, err = zstd.NewWriter(&buf)
	default:
		t.Fatalf("no compressor %q", comp)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
