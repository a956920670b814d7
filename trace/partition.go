package trace

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Partitioning splits a trace's pages into Count partitions by the sampling
// hash ([Sample.Hash]) with Seed, so that a sample with the same seed is the
// first partitions of its trace (docs/trace-format.md, versions 3 to 5). The
// zero Partitioning is a trace that is not partitioned.
//
// A page's digit q = Hash mod 10^6 is below the trace's rate R (10^6 for a
// whole trace), and partition p holds the digits Cuts[p] <= q < Cuts[p+1].
// A reader gives every version's cuts (versions 3 and 4: equal partitions,
// [EqualCuts]); a writer given nil Cuts writes [DefaultCuts] for Count.
type Partitioning struct {
	Count int      // partitions, 1 .. MaxPartitions; 0: not partitioned
	Seed  uint64   // the hash's seed (a sampled trace's sample seed)
	Cuts  []uint32 // Count+1 digits: 0 first, R last, nondecreasing; nil: see above
}

// MaxPartitions is the most partitions a trace may have.
const MaxPartitions = 4096

// DefaultPartitions is the partition count the docs suggest for a whole
// trace (mdk convert --partitions 12): with [DefaultCuts], a sample ladder
// of three partitions (0.1%, 0.9% and 9% of the pages) and nine of 10%
// each, so that a 0.1%, 1% or 10% sample reads exactly its pages and two
// or five cores get equal shares.
const DefaultPartitions = 12

// DefaultPartitionSeed is the seed a whole trace is partitioned with unless
// told otherwise: --sample-seed's default, so that a default sample of the
// trace reads only its first partitions.
const DefaultPartitionSeed = 1

// On reports whether the trace is partitioned.
func (p Partitioning) On() bool { return p.Count > 0 }

// Validate checks the partition count, and the cuts if they are given
// (that the last is the trace's rate is the writer's check).
func (p Partitioning) Validate() error {
	if p.Count < 0 || p.Count > MaxPartitions {
		return fmt.Errorf("%d partitions: want 1 .. %d (or 0 for none)", p.Count, MaxPartitions)
	}
	if p.Cuts == nil {
		return nil
	}
	switch {
	case len(p.Cuts) != p.Count+1:
		return fmt.Errorf("%d cuts for %d partitions: want %d", len(p.Cuts), p.Count, p.Count+1)
	case p.Cuts[0] != 0:
		return fmt.Errorf("partition cuts start at %d: want 0", p.Cuts[0])
	case !slices.IsSorted(p.Cuts):
		return fmt.Errorf("partition cuts %v: want them nondecreasing", p.Cuts)
	}
	return nil
}

// Equal reports whether p and o are the same partitions.
func (p Partitioning) Equal(o Partitioning) bool {
	return p.Count == o.Count && p.Seed == o.Seed && slices.Equal(p.Cuts, o.Cuts)
}

// Width returns the digits of partition i: its expected share of the
// pages is Width(i)/R. p's cuts must be set (a reader's are).
func (p Partitioning) Width(i int) uint64 { return uint64(p.Cuts[i+1] - p.Cuts[i]) }

// EqualCuts returns the cuts of n equal partitions of the digits below r:
// Cuts[p] = ceil(p*r/n), so that partition floor(q*n/r) holds digit q (the
// partitions of versions 3 and 4; some are empty if n > r).
func EqualCuts(n int, r uint64) []uint32 {
	cuts := make([]uint32, n+1)
	for p := range cuts {
		cuts[p] = uint32((uint64(p)*r + uint64(n) - 1) / uint64(n))
	}
	return cuts
}

// DefaultCuts returns the cuts mdk writes for n partitions of the digits
// below r: with n >= 4, a sample ladder of three partitions ending at
// r/1000, r/100 and r/10 (rounded down), then n-3 equal partitions of
// [r/10, r) (cut j at r/10 + ceil(j*(r - r/10)/(n-3))); with n < 4, n
// equal partitions ([EqualCuts]). Empty partitions (repeated cuts, where r
// is small) are dropped, so there may be fewer than n.
func DefaultCuts(n int, r uint64) []uint32 {
	var cuts []uint32
	if n < 4 {
		cuts = EqualCuts(n, r)
	} else {
		cuts = []uint32{0, uint32(r / 1000), uint32(r / 100)}
		lo, m := r/10, uint64(n-3)
		for j := range m + 1 {
			cuts = append(cuts, uint32(lo+(j*(r-lo)+m-1)/m))
		}
	}
	return slices.Compact(cuts)
}

// resolve returns p's cuts for a trace of rate r written in version v: p's
// own or, if nil, DefaultCuts (version 5) or EqualCuts (versions 3 and 4),
// without empty partitions in version 5.
func (p Partitioning) resolve(r uint64, v uint32) (Partitioning, error) {
	if err := p.Validate(); err != nil {
		return p, err
	}
	if v < BinaryPartitionedVersion {
		eq := EqualCuts(p.Count, r)
		if p.Cuts != nil && !slices.Equal(p.Cuts, eq) {
			return p, fmt.Errorf("version %d has equal partitions only, not cuts %v", v, p.Cuts)
		}
		p.Cuts = eq
		return p, nil
	}
	cuts := p.Cuts
	if cuts == nil {
		cuts = DefaultCuts(p.Count, r)
	} else if uint64(cuts[len(cuts)-1]) != r {
		return p, fmt.Errorf("partition cuts end at %d, not at the trace's rate %d", cuts[len(cuts)-1], r)
	}
	p.Cuts = slices.Compact(slices.Clone(cuts))
	p.Count = len(p.Cuts) - 1
	return p, nil
}

// partitioner maps pages to the partitions of a trace whose pages are
// those of sample s: a page's digit q = Hash mod 10^6 is below s's rate
// (10^6 for a whole trace), and partition p holds it if cuts[p] <= q <
// cuts[p+1] (equal partitions: p = q*count/rate).
type partitioner struct {
	s     Sample // the hash's seed; the trace's rate
	count uint64
	rate  uint64
	cuts  []uint32 // nil: equal partitions
}

// newPartitioner returns p's partitioner; p's cuts, if not nil, must be
// valid for s's rate.
func newPartitioner(p Partitioning, s Sample) partitioner {
	rate := uint64(SampleAll)
	if !s.All() {
		rate = uint64(s.PPM)
		p.Seed = s.Seed
	}
	pt := partitioner{s: Sample{Seed: p.Seed}, count: uint64(p.Count), rate: rate}
	if p.Cuts != nil && !slices.Equal(p.Cuts, EqualCuts(p.Count, rate)) {
		pt.cuts = p.Cuts
	}
	return pt
}

// digitSpan is the digits of one partition, lo .. hi-1, with the hash's
// seed: a page is in the partition if the digit of its hash is in them
// (decodeNew's check of a partition's new pages).
type digitSpan struct {
	seed, lo, hi uint64
}

// span returns partition i's digits: of(p) == i exactly when p's digit is
// in them.
func (pt partitioner) span(i int) digitSpan {
	if pt.cuts != nil {
		return digitSpan{pt.s.Seed, uint64(pt.cuts[i]), uint64(pt.cuts[i+1])}
	}
	// floor(q*count/rate) == i for ceil(i*rate/count) <= q < ceil((i+1)*rate/count).
	c := func(i int) uint64 { return (uint64(i)*pt.rate + pt.count - 1) / pt.count }
	return digitSpan{pt.s.Seed, c(i), c(i + 1)}
}

// of returns p's partition, or -1 if its digit is not below the rate (the
// page is not in the trace's sample).
func (pt partitioner) of(p Page) int {
	q := pt.s.Hash(p) % SampleAll
	if q >= pt.rate {
		return -1
	}
	if pt.cuts == nil {
		return int(q * pt.count / pt.rate)
	}
	// The last cut at or below q, of the count+1: cuts[0] = 0 <= q < rate.
	return sort.Search(int(pt.count), func(i int) bool { return uint64(pt.cuts[i+1]) > q })
}

// PartitionsOf returns how many of the first partitions of a trace
// partitioned by p, whose pages are those of sample have, hold every page of
// the sample req (a subset of have's with p's seed), and whether they hold
// exactly req's pages. If req's seed is not the partitions' it returns
// every partition and false. p's cuts, if not nil, must be valid for have's
// rate (nil: equal partitions).
func PartitionsOf(p Partitioning, have, req Sample) (n int, exact bool) {
	pt := newPartitioner(p, have)
	if req.All() || req == have {
		return p.Count, true
	}
	if req.Seed != pt.s.Seed || uint64(req.PPM) > pt.rate {
		return p.Count, false
	}
	// Digits below req.PPM: the partitions that start below it.
	r := uint64(req.PPM)
	if pt.cuts == nil {
		n = int((r*pt.count + pt.rate - 1) / pt.rate)
		return n, r*pt.count%pt.rate == 0
	}
	n = sort.Search(p.Count, func(i int) bool { return uint64(pt.cuts[i+1]) >= r }) + 1
	return n, uint64(pt.cuts[n]) == r
}

// ParsePartitionCuts parses a list of cuts given as percentages of a whole
// trace's digits, comma-separated and increasing ("0.1%,1%,10%,55%", at
// most four decimals; 0 and 100% are implied), into the cuts of a trace of
// rate r (10^6 for a whole trace): 0, the cuts, r. Every cut must be below r.
func ParsePartitionCuts(s string, r uint64) ([]uint32, error) {
	cuts := []uint32{0}
	for _, f := range strings.Split(s, ",") {
		num, ok := strings.CutSuffix(strings.TrimSpace(f), "%")
		v, err := parseFixed(num, 4)
		switch {
		case !ok || err != nil:
			return nil, fmt.Errorf("partition cut %q: want a percentage such as 1%% or 0.1%% (at most four decimals)", f)
		case v < 1 || uint64(v) >= r:
			return nil, fmt.Errorf("partition cut %q: want above 0 and below the trace's rate (%s)", f, FormatPPM(int64(r)))
		case uint32(v) <= cuts[len(cuts)-1]:
			return nil, fmt.Errorf("partition cut %q: the cuts must increase", f)
		}
		cuts = append(cuts, uint32(v))
	}
	if len(cuts) > MaxPartitions {
		return nil, fmt.Errorf("%d partition cuts: at most %d", len(cuts)-1, MaxPartitions-1)
	}
	return append(cuts, uint32(r)), nil
}

// Ranges cuts p's partitions into at most n ranges of consecutive
// partitions (lo, hi: partitions lo .. hi-1), each nonempty and each about
// an nth of the digits: range i ends at the cut nearest i/n of the rate
// (a worker's share of a trace, mdk-fleet's pieces). Without cuts the
// partitions count as equal.
func (p Partitioning) Ranges(n int) [][2]int {
	P := p.Count
	n = min(n, P)
	cuts := p.Cuts
	if len(cuts) != P+1 {
		cuts = EqualCuts(P, SampleAll)
	}
	r := uint64(cuts[P])
	out := make([][2]int, 0, n)
	lo := 0
	for i := 1; i <= n; i++ {
		hi := P
		if i < n {
			t := uint64(i) * r // the target, times n
			hi = sort.Search(P+1, func(k int) bool { return uint64(cuts[k])*uint64(n) >= t })
			if hi > 0 && t-uint64(cuts[hi-1])*uint64(n) < uint64(cuts[hi])*uint64(n)-t {
				hi-- // the cut below is nearer
			}
			hi = max(lo+1, min(hi, P-(n-i)))
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}
