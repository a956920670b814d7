package trace

import "io"

// SetHistChunk sets the IDs a HistWalker's goroutine claims at a time, so
// that tests share small windows between goroutines.
func SetHistChunk(hw *HistWalker, n int) { hw.chunk = n }

// SetPackLimit makes a HistWalker widen its words after window w, so that
// tests widen in the middle of small traces.
func SetPackLimit(hw *HistWalker, w int) {
	if hw.p32 != nil {
		hw.limit = w
	}
}

// StateOnHeap reports whether a HistWalker's page state is on the Go heap
// (rather than in its growing mapping).
func StateOnHeap(hw *HistWalker) bool {
	if hw.p32 != nil {
		return hw.p32.heap
	}
	return hw.p64.heap
}

// NewPartitionedWriterVersion returns a writer of a partitioned trace of
// the given version: 3 (the new pages once for all partitions, as the mdk
// of version 3 wrote it), 4 (each partition's new pages in its payload,
// equal partitions, as the mdk of version 4 wrote it) or 5
// (NewPartitionedWriter's), so that tests read all.
func NewPartitionedWriterVersion(w io.Writer, h Header, p Partitioning, version uint32) (Writer, error) {
	return newBinaryWriter(w, h, p, version)
}

// BinaryPartitionedV3 is the first partitioned version; V4 the second.
const (
	BinaryPartitionedV3 = binaryPartitionedV3
	BinaryPartitionedV4 = binaryPartitionedV4
)

// Reseed makes the reader of a partitioned trace (version 4) check its new
// pages' partitions with another seed: as if the file had put its pages in
// partitions they are not in.
func Reseed(r Reader, seed uint64) {
	pr := r.(*partReader)
	pr.pt.s.Seed = seed
	for p := range pr.parts {
		pr.parts[p].span = pr.pt.span(p)
	}
}

// PartitionSpan returns the digits lo .. hi-1 of partition i of a trace
// partitioned by p whose pages are sample s's, as a reader checks a
// partition's new pages, and the partition of page pg as the reader
// finds it, and pg's digit.
func PartitionSpan(p Partitioning, s Sample, i int, pg Page) (lo, hi uint64, of int, digit uint64) {
	pt := newPartitioner(p, s)
	sp := pt.span(i)
	return sp.lo, sp.hi, pt.of(pg), pt.s.Hash(pg) % SampleAll
}
