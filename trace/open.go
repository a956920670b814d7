package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Format is one trace file format.
type Format struct {
	Name  string   // "text", "binary"
	Exts  []string // file extensions, with the dot: ".txt"
	Magic []byte   // the first bytes of every file in this format
	// NewReader returns a reader over r; name is used in error messages.
	NewReader func(r io.Reader, name string) (Reader, error)
	// NewWriter returns a writer to w for a trace with header h.
	NewWriter func(w io.Writer, h Header) (Writer, error)
}

// formats lists the known formats; the first is the default for output.
var formats = []*Format{textFormat, binaryFormat}

// Formats returns the known formats.
func Formats() []*Format { return formats }

// FormatByName returns the format called name.
func FormatByName(name string) (*Format, error) {
	for _, f := range formats {
		if f.Name == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("unknown trace format %q (known: %s)", name, formatNames())
}

// FormatForPath returns the format for a file name by its extension.
func FormatForPath(path string) (*Format, error) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range formats {
		for _, e := range f.Exts {
			if e == ext {
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: cannot tell the trace format from the extension %q (known: %s)", path, ext, formatNames())
}

func formatNames() string {
	var names []string
	for _, f := range formats {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// NewReaderAuto returns a reader for r, telling the format by its first
// bytes. name is used in error messages. If r is an io.ReadSeeker (a file),
// the reader of a partitioned trace seeks past the partitions it does not
// read.
func NewReaderAuto(r io.Reader, name string) (Reader, error) {
	start := int64(-1) // r's offset in its file: where the trace starts
	if s, ok := r.(io.Seeker); ok {
		if off, err := s.Seek(0, io.SeekCurrent); err == nil {
			start = off
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for _, f := range formats {
		head, _ := br.Peek(len(f.Magic))
		if bytes.Equal(head, f.Magic) {
			out, err := f.NewReader(br, name)
			if pr, ok := out.(*partReader); ok && err == nil {
				if rs, ok := r.(io.ReadSeeker); ok {
					pr.br.seeker = rs // skip unread partitions by seeking
				}
				pr.setFile(r, start)
			}
			return out, err
		}
	}
	head, err := br.Peek(16)
	if len(head) == 0 && err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(head) == 0 {
		return nil, fmt.Errorf("%s: empty file, not an mdk trace", name)
	}
	return nil, fmt.Errorf("%s: not an mdk trace (starts with %q; known formats: %s)", name, head, formatNames())
}

// Open opens the trace file at path, in any known format. The caller closes
// the returned closer when done.
func Open(path string) (Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is a directory, not a trace file", path)
	}
	r, err := NewReaderAuto(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, f, nil
}
