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
	r.(*partReader).pt.s.Seed = seed
}
