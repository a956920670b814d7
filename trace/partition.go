package trace

import "fmt"

// Partitioning splits a trace's pages into Count partitions by the sampling
// hash ([Sample.Hash]) with Seed, so that a sample with the same seed is the
// first partitions of its trace (docs/trace-format.md, versions 3 and 4). The zero
// Partitioning is a trace that is not partitioned.
type Partitioning struct {
	Count int    // partitions, 1 .. MaxPartitions; 0: not partitioned
	Seed  uint64 // the hash's seed (a sampled trace's sample seed)
}

// MaxPartitions is the most partitions a trace may have.
const MaxPartitions = 4096

// DefaultPartitions is the partition count the docs suggest for a whole
// trace (mdk convert --partitions 100): a 1% sample of it is one partition.
// (mdk record --sample writes fewer: a sampled trace is small.)
const DefaultPartitions = 100

// DefaultPartitionSeed is the seed a whole trace is partitioned with unless
// told otherwise: --sample-seed's default, so that a default sample of the
// trace reads only its first partitions.
const DefaultPartitionSeed = 1

// On reports whether the trace is partitioned.
func (p Partitioning) On() bool { return p.Count > 0 }

// Validate checks the partition count.
func (p Partitioning) Validate() error {
	if p.Count < 0 || p.Count > MaxPartitions {
		return fmt.Errorf("%d partitions: want 1 .. %d (or 0 for none)", p.Count, MaxPartitions)
	}
	return nil
}

// partitioner maps pages to the partitions of a trace whose pages are
// those of sample s: a page's digit q = Hash mod 10^6 is below s's rate
// (10^6 for a whole trace), and partition q*Count/rate holds it.
type partitioner struct {
	s     Sample // the hash's seed; the trace's rate
	count uint64
	rate  uint64
}

func newPartitioner(p Partitioning, s Sample) partitioner {
	rate := uint64(SampleAll)
	if !s.All() {
		rate = uint64(s.PPM)
		p.Seed = s.Seed
	}
	return partitioner{s: Sample{Seed: p.Seed}, count: uint64(p.Count), rate: rate}
}

// of returns p's partition, or -1 if its digit is not below the rate (the
// page is not in the trace's sample).
func (pt partitioner) of(p Page) int {
	q := pt.s.Hash(p) % SampleAll
	if q >= pt.rate {
		return -1
	}
	return int(q * pt.count / pt.rate)
}

// PartitionsOf returns how many of the first partitions of a trace
// partitioned by p, whose pages are those of sample have, hold every page of
// the sample req (a subset of have's with p's seed), and whether they hold
// exactly req's pages. If req's seed is not the partitions' it returns
// every partition and false.
func PartitionsOf(p Partitioning, have, req Sample) (n int, exact bool) {
	pt := newPartitioner(p, have)
	if req.All() || req == have {
		return p.Count, true
	}
	if req.Seed != pt.s.Seed || uint64(req.PPM) > pt.rate {
		return p.Count, false
	}
	// Digits below req.PPM: partitions q*count/rate for q < PPM.
	r := uint64(req.PPM)
	n = int((r*pt.count + pt.rate - 1) / pt.rate)
	return n, r*pt.count%pt.rate == 0
}
