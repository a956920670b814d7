package trace

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// PartitionForker is implemented by the reader of a partitioned trace in
// a file (Open, or NewReaderAuto on an io.ReaderAt of known size): it opens
// more readers of the same file, each of some of the partitions, that read
// the segments at their own pace, each through its own handle on the file
// (an io.SectionReader: positioned reads, no shared offset). A worker with
// its own reader walks its partitions window after window without waiting
// at each segment for a caller's NextSegment (mpc's generatePartitioned).
type PartitionForker interface {
	// ForkPartitions returns a new reader of the same file that reads
	// partitions parts only, skipping the others' bytes, with this
	// reader's CountNew and DiscardPages. Call it before this reader's
	// first Read or NextSegment; the fork is independent of this reader
	// (either may be read, or dropped, without the other). A fork reads
	// each payload of a segment when its partition's first window is
	// decoded, into one buffer: its PartitionWindow calls must not run
	// concurrently (one worker reads it).
	ForkPartitions(parts []int) (PartitionedReader, error)
}

// errNoFork is ForkPartitions's error when the trace is not in a file
// that can be read at an offset.
var errNoFork = errors.New("not a file that can be read at an offset (a pipe?)")

// setFile gives the reader the file under its reader, for ForkPartitions,
// if r can be read at an offset and its size is known (a regular file):
// the trace is its bytes from start.
func (pr *partReader) setFile(r io.Reader, start int64) {
	at, ok := r.(io.ReaderAt)
	if !ok || start < 0 {
		return
	}
	size := int64(-1)
	switch f := r.(type) {
	case *os.File:
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	case interface{ Size() int64 }: // io.SectionReader, bytes.Reader
		size = f.Size()
	}
	if size >= start {
		pr.at, pr.atStart, pr.atSize = at, start, size-start
	}
}

// ForkPartitions returns a reader of the same file for partitions parts.
func (pr *partReader) ForkPartitions(parts []int) (PartitionedReader, error) {
	if pr.at == nil {
		return nil, fmt.Errorf("trace: %s: cannot fork a reader: %w", pr.br.name, errNoFork)
	}
	if pr.n > 0 || pr.br.next > 0 || pr.err != nil {
		return nil, fmt.Errorf("trace: %s: cannot fork a reader that has read a segment", pr.br.name)
	}
	P := len(pr.parts)
	want := make([]bool, P)
	for _, p := range parts {
		if p < 0 || p >= P {
			return nil, fmt.Errorf("trace: %s: cannot fork partition %d: the trace has %d", pr.br.name, p, P)
		}
		if want[p] {
			return nil, fmt.Errorf("trace: %s: cannot fork partition %d twice", pr.br.name, p)
		}
		want[p] = true
	}
	r, err := NewReaderAuto(io.NewSectionReader(pr.at, pr.atStart, pr.atSize), pr.br.name)
	if err != nil {
		return nil, err
	}
	fr, ok := r.(*partReader)
	if !ok || fr.br.version != pr.br.version || fr.br.hdr != pr.br.hdr || !slices.Equal(fr.br.parts.Cuts, pr.br.parts.Cuts) || fr.br.parts.Count != pr.br.parts.Count {
		return nil, fmt.Errorf("trace: %s: the file changed under the reader: its header is not the one read first", pr.br.name)
	}
	fr.count, fr.discard, fr.double = pr.count, pr.discard, pr.double
	fr.br.count, fr.br.discard, fr.br.double = pr.br.count, pr.br.discard, pr.br.double
	fr.selectSet(func(p int) bool { return want[p] })
	fr.lazy = true
	return fr, nil
}
