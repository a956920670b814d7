package collect

import (
	"mdk/internal/outfile"
	"mdk/trace"
)

// traceFile is a recorder's output file: the trace is written to a
// temporary file beside it, renamed into place once its first window is
// complete. A recording that fails before that leaves an existing file
// untouched; one killed after it leaves every completed window readable.
type traceFile struct {
	path   string
	format *trace.Format
	parts  trace.Partitioning // if on, a partitioned binary trace
	f      *outfile.File      // nil until the header is known
}

func newTraceFile(path string) (*traceFile, error) {
	format, err := trace.FormatForPath(path)
	if err != nil {
		return nil, err
	}
	return &traceFile{path: path, format: format}, nil
}

// newWriter is the recorders' newWriter callback.
func (t *traceFile) newWriter(h trace.Header) (trace.Writer, error) {
	f, err := outfile.Create(t.path)
	if err != nil {
		return nil, err
	}
	var w trace.Writer
	if t.parts.On() {
		w, err = trace.NewPartitionedWriter(f, h, t.parts)
	} else {
		w, err = t.format.NewWriter(f, h)
	}
	if err != nil {
		f.Abort()
		return nil, err
	}
	t.f = f
	return &publishingWriter{w, f}, nil
}

// finish commits the file after a recording that ended with err == nil,
// and otherwise removes it unless it was already published. It returns the
// first error.
func (t *traceFile) finish(err error) error {
	if t.f == nil {
		return err
	}
	if err != nil {
		t.f.Abort()
		return err
	}
	return t.f.Commit()
}

// publishingWriter flushes each window into the file and publishes the
// file after the first.
type publishingWriter struct {
	trace.Writer
	f *outfile.File
}

func (p *publishingWriter) WriteWindow(w *trace.Window) error {
	if err := p.Writer.WriteWindow(w); err != nil {
		return err
	}
	if fl, ok := p.Writer.(interface{ Flush() error }); ok {
		if err := fl.Flush(); err != nil {
			return err
		}
	}
	return p.f.Publish()
}
