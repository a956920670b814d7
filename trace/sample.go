package trace

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SampleAll is a sampling rate of 100%, in parts per million.
const SampleAll = 1_000_000

// Sample is a spatial sample of a trace's pages, as SHARDS samples a
// cache's keys: a page is kept when a seeded hash of its (space, page) falls
// below the rate, so it is in or out for the whole trace and its lives and
// gaps are exact. The zero Sample keeps every page (not sampled).
//
// The hash is [Sample.Hash]; a page is kept when Hash mod 10^6 < PPM, so a
// sample at a lower rate with the same seed is a subset of one at a higher
// rate. Sub-samples for error bounds ([Sample.Group]) take the hash's
// higher digits, independent of whether the page is kept.
type Sample struct {
	PPM  int64  // pages kept per million, 1 .. SampleAll; 0 means SampleAll
	Seed uint64 // the hash's seed
}

// All reports whether s keeps every page.
func (s Sample) All() bool { return s.PPM <= 0 || s.PPM >= SampleAll }

// Scale is 1/rate: the factor that turns a count of sampled pages into an
// estimate for all pages. It is 1 for a trace that is not sampled.
func (s Sample) Scale() int64 {
	if s.All() {
		return 1
	}
	return SampleAll / s.PPM
}

// Rate is the fraction of pages kept.
func (s Sample) Rate() float64 {
	if s.All() {
		return 1
	}
	return float64(s.PPM) / SampleAll
}

// FormatPPM formats a rate in parts per million as a percentage with the
// digits it needs: 10000 is "1%", 1000 is "0.1%".
func FormatPPM(ppm int64) string {
	return strconv.FormatFloat(float64(ppm)/1e4, 'f', -1, 64) + "%"
}

// String describes s: "1% seed 7", or "100%" when it keeps every page.
func (s Sample) String() string {
	if s.All() {
		return "100%"
	}
	return FormatPPM(s.PPM) + " seed " + strconv.FormatUint(s.Seed, 10)
}

// Validate checks that s.PPM is 0, SampleAll, or divides SampleAll: then
// 1/rate is an integer and every count scaled by it stays an integer.
func (s Sample) Validate() error {
	if s.PPM < 0 || s.PPM > SampleAll || s.PPM > 0 && SampleAll%s.PPM != 0 {
		return fmt.Errorf("sampling rate %s: want 1/N of 100%% for an integer N that divides 1000000 (100%%, 50%%, 10%%, 5%%, 1%%, 0.1%%, ...), so that scaled counts stay integers", FormatPPM(s.PPM))
	}
	return nil
}

// mix64 is SplitMix64's finalizer, a bijection of 64-bit words.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Hash is the sampling hash of p: mix(mix(seed ^ space) ^ page), with
// mix SplitMix64's finalizer (docs/trace-format.md gives it in full).
func (s Sample) Hash(p Page) uint64 {
	return mix64(mix64(s.Seed^uint64(p.Space)) ^ p.Page)
}

// Keep reports whether s keeps p.
func (s Sample) Keep(p Page) bool {
	return s.All() || int64(s.Hash(p)%SampleAll) < s.PPM
}

// Group returns p's sub-sample among k (0 .. k-1): the hash's digits above
// the ones Keep looks at, so the k groups split any sample at random.
func (s Sample) Group(p Page, k int) int {
	return int(s.Hash(p) / SampleAll % uint64(k))
}

// Within returns the sample of a run that asks for req on a trace whose
// header says it is sampled by have: req if the trace is complete, have if
// req asks for every page, and req if it is a subset of have (same seed,
// rate at or below); anything else is an error, because its pages are not
// in the trace.
func (have Sample) Within(req Sample) (Sample, error) {
	if err := req.Validate(); err != nil {
		return Sample{}, err
	}
	switch {
	case have.All():
		if req.All() {
			return Sample{}, nil
		}
		return req, nil
	case req.All():
		return have, nil
	case req.Seed == have.Seed && req.PPM <= have.PPM:
		return req, nil
	}
	return Sample{}, fmt.Errorf("the trace is already sampled at %s: a sample of it must use seed %d and a rate of at most %s (asked for %s)", have, have.Seed, FormatPPM(have.PPM), req)
}

// SampleSplit reads the pages of a trace that a sample keeps, and splits
// them at random into sub-samples (the error bounds' groups). Each output
// has its own dense IDs, consecutive in order of first appearance, as a
// Reader's.
type SampleSplit struct {
	r      Reader
	hdr    Header
	s      Sample
	filter bool // drop the pages s does not keep (else the trace's are s's)
	k      int
	ids    []uint32 // r's ID -> the sample's ID, or dropped
	group  []uint32 // the sample's ID -> group<<groupShift | ID in the group
	counts []uint32 // pages per group
	kept   []Page   // the sample's pages (unless discarded)
	keep   bool
	only   bool        // groups only: the sample's window is not filled (GroupsOnly)
	outs   [2][]Window // double-buffered: [0] the sample, [1+g] group g
	cur    int
}

const (
	dropped    = ^uint32(0)
	groupShift = 26 // IDs in a group: below 2^26; groups: up to 64
	// MaxSampleGroups is the most sub-samples a SampleSplit makes.
	MaxSampleGroups = 64
)

// NewSampleSplit returns a split of r's pages by s (which must be
// r.Header().Sample.Within some request) into the sample and k groups (k
// may be 0). Header().Sample is s. r's page table is dropped if it can be
// ([PageDiscarder]); the split keeps the sampled pages' own. A partitioned
// trace ([PartitionedReader]) is told to read only the partitions that
// hold the sample, when its partitions' seed is s's.
func NewSampleSplit(r Reader, s Sample, k int) (*SampleSplit, error) {
	if k < 0 || k > MaxSampleGroups {
		return nil, fmt.Errorf("trace: %d sub-samples: want 0 .. %d", k, MaxSampleGroups)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	h := r.Header()
	sp := &SampleSplit{r: r, hdr: h, s: s, k: k, keep: true}
	sp.filter = s != h.Sample && !s.All()
	sp.hdr.Sample = s
	if s.All() {
		sp.hdr.Sample = Sample{}
	}
	if d, ok := r.(PageDiscarder); ok {
		d.DiscardPages()
	}
	if pr, ok := r.(PartitionedReader); ok && sp.filter {
		// Read only the partitions that hold the sample.
		if n, _ := PartitionsOf(pr.Partitioning(), h.Sample, s); n < pr.Selected() {
			pr.SelectPartitions(n)
		}
	}
	for i := range sp.outs {
		sp.outs[i] = make([]Window, 1+k)
	}
	sp.counts = make([]uint32, k)
	return sp, nil
}

// Header returns r's header with the sample's rate and seed.
func (sp *SampleSplit) Header() Header { return sp.hdr }

// Groups is the number of sub-samples.
func (sp *SampleSplit) Groups() int { return sp.k }

// Kept is the number of the sample's pages read so far.
func (sp *SampleSplit) Kept() int { return len(sp.group) }

// DiscardPages stops keeping the sampled pages' table.
func (sp *SampleSplit) DiscardPages() { sp.keep, sp.kept = false, nil }

// GroupsOnly stops filling the sample's own window (Read's [0] keeps its
// index only; the groups' are the same), for a caller that needs the
// groups alone: their union is the sample. It does nothing without groups.
func (sp *SampleSplit) GroupsOnly() { sp.only = sp.k > 0 }

// Pages returns the sample's pages by its dense ID.
func (sp *SampleSplit) Pages() []Page { return sp.kept }

// Read returns the next window of the sample ([0]) and of each group
// ([1+g]), or io.EOF. The windows stay intact until the second Read after
// them (as with [Lookahead]).
func (sp *SampleSplit) Read() ([]Window, error) {
	w, err := sp.r.Read()
	if err != nil {
		return nil, err
	}
	outs := sp.outs[sp.cur]
	sp.cur ^= 1
	for i := range outs {
		outs[i].Reset(w.Index)
	}
	for _, p := range w.New {
		if sp.filter && !sp.s.Keep(p) {
			sp.ids = append(sp.ids, dropped)
			continue
		}
		id := uint32(len(sp.group))
		if id == dropped {
			return nil, errors.New("trace: sample: more than 2^32-1 pages")
		}
		sp.ids = append(sp.ids, id)
		if !sp.only {
			outs[0].New = append(outs[0].New, p)
		}
		if sp.keep {
			sp.kept = append(sp.kept, p)
		}
		var gv uint32
		if sp.k > 0 {
			g := sp.s.Group(p, sp.k)
			if sp.counts[g] >= 1<<groupShift {
				return nil, fmt.Errorf("trace: sample: more than 2^%d pages in a sub-sample", groupShift)
			}
			gv = uint32(g)<<groupShift | sp.counts[g]
			sp.counts[g]++
			outs[1+g].New = append(outs[1+g].New, p)
		}
		sp.group = append(sp.group, gv)
	}
	outs[0].Accessed = sp.list(w.Accessed, outs, 0)
	outs[0].Born = sp.list(w.Born, outs, 1)
	outs[0].Freed = sp.list(w.Freed, outs, 2)
	return outs, nil
}

// list maps the IDs of one of r's lists (which: 0 accessed, 1 born, 2
// freed) into the sample's list, which it returns, and the groups'.
func (sp *SampleSplit) list(ids []uint32, outs []Window, which int) []uint32 {
	out := *listOf(&outs[0], which)
	m := sp.ids
	if sp.k == 0 {
		for _, id := range ids {
			if n := m[id]; n != dropped {
				out = append(out, n)
			}
		}
		return out
	}
	// The groups' lists are appended to in a local array (no switch and
	// no indirection through the windows per ID), then stored back.
	var gs [MaxSampleGroups][]uint32
	for g := range sp.k {
		gs[g] = *listOf(&outs[1+g], which)
	}
	only, group := sp.only, sp.group
	for _, id := range ids {
		n := m[id]
		if n == dropped {
			continue
		}
		if !only {
			out = append(out, n)
		}
		gv := group[n]
		g := gv >> groupShift
		gs[g] = append(gs[g], gv&(1<<groupShift-1))
	}
	for g := range sp.k {
		*listOf(&outs[1+g], which) = gs[g]
	}
	return out
}

func listOf(w *Window, which int) *[]uint32 {
	switch which {
	case 0:
		return &w.Accessed
	case 1:
		return &w.Born
	}
	return &w.Freed
}

// SampleReader is a Reader of the pages a sample keeps (a [SampleSplit]
// without groups). Its windows stay intact until the second Read after
// them.
type SampleReader struct{ sp *SampleSplit }

// NewSampleReader returns a reader of the pages of r that s keeps, s being
// r.Header().Sample.Within some request.
func NewSampleReader(r Reader, s Sample) (*SampleReader, error) {
	sp, err := NewSampleSplit(r, s, 0)
	if err != nil {
		return nil, err
	}
	return &SampleReader{sp}, nil
}

func (sr *SampleReader) Header() Header { return sr.sp.Header() }
func (sr *SampleReader) Pages() []Page  { return sr.sp.Pages() }
func (sr *SampleReader) DiscardPages()  { sr.sp.DiscardPages() }
func (sr *SampleReader) DoubleBuffer()  {} // always double-buffered

func (sr *SampleReader) Read() (*Window, error) {
	ws, err := sr.sp.Read()
	if err != nil {
		return nil, err
	}
	return &ws[0], nil
}

// ParseSampleRate parses a sampling rate given as a percentage ("1%",
// "0.1%", "100%", at most four decimals) or a fraction ("0.01") into parts
// per million, and checks it ([Sample.Validate]).
func ParseSampleRate(s string) (int64, error) {
	var ppm int64
	if num, ok := strings.CutSuffix(s, "%"); ok {
		v, err := parseFixed(num, 4)
		if err != nil {
			return 0, fmt.Errorf("sampling rate %q: %v", s, err)
		}
		ppm = v
	} else {
		v, err := parseFixed(s, 6)
		if err != nil {
			return 0, fmt.Errorf("sampling rate %q: %v (or give a percentage such as 1%%)", s, err)
		}
		ppm = v
	}
	if ppm < 1 || ppm > SampleAll {
		return 0, fmt.Errorf("sampling rate %q: want above 0 and at most 100%%", s)
	}
	return ppm, Sample{PPM: ppm}.Validate()
}

// parseFixed parses a non-negative decimal with at most prec fraction
// digits as an integer in units of 10^-prec.
func parseFixed(s string, prec int) (int64, error) {
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" || len(fp) > prec || len(ip) > 7 {
		return 0, fmt.Errorf("want a decimal number with at most %d decimals", prec)
	}
	for _, c := range ip + fp {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("want a decimal number with at most %d decimals", prec)
		}
	}
	fp += strings.Repeat("0", prec-len(fp))
	v, err := strconv.ParseInt(ip+fp, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a decimal number with at most %d decimals", prec)
	}
	return v, nil
}

// parseSampleHeader parses the value of the text format's sample header:
// "RATE seed N".
func parseSampleHeader(v string) (Sample, error) {
	f := strings.Fields(v)
	if len(f) != 3 || f[1] != "seed" {
		return Sample{}, fmt.Errorf("%q: expected \"RATE seed N\", such as \"1%% seed 7\"", v)
	}
	ppm, err := ParseSampleRate(f[0])
	if err != nil {
		return Sample{}, err
	}
	if ppm == SampleAll {
		return Sample{}, fmt.Errorf("%q: a sample of 100%% is a whole trace: leave the header out", v)
	}
	seed, err := strconv.ParseUint(f[2], 10, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("seed %q: expected a decimal integer below 2^64", f[2])
	}
	return Sample{PPM: ppm, Seed: seed}, nil
}

// Partitioning returns the partitions of the trace sampled, if it is a
// partitioned binary trace (else the zero Partitioning).
func (sr *SampleReader) Partitioning() Partitioning {
	if pr, ok := sr.sp.r.(PartitionedReader); ok {
		return pr.Partitioning()
	}
	return Partitioning{}
}
