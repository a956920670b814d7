package mpc

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// A Partial is the mergeable state of an exact pass over some of a
// partitioned trace's partitions ([WalkPartitions]): per window, what
// those partitions contribute to the engines, which is all the engines
// are given. A page is in one partition, so its lives and gaps are those
// of the whole trace, and the trace's window is the sum of its
// partitions': accessed and alive counts add, and the gap histograms add
// (the engines add up every entry they are given; OPP takes its budgets on
// the merged accessed count when a window ends). Partials of disjoint
// partitions merge ([Partial.Merge]) into the partial of their union, and
// the partial of every partition gives every setting's result
// ([Partial.Results]), integer for integer the unpartitioned pass's: the
// merge and the engines' feed are generatePartitioned's own
// (PartialWindow.add, stream.feedWindow), which mdk mpc runs on every core.
//
// Its size grows with the data, not with the trace's header: per window
// two counts and an entry (idle length, prior class, count) for each
// distinct (idle, class) pair among the gaps ending there, so at most
// min(gaps, w x classes) entries in window w, and in practice far fewer
// (docs/fleet.md measures it). [Partial.MarshalBinary] encodes it in
// varints.
type Partial struct {
	PageSize   int64
	Partitions trace.Partitioning // the trace's partitions
	// Ranges are the partitions walked, as disjoint [lo, hi) ranges in
	// ascending order.
	Ranges [][2]int
	// Classes are the class axis of the histograms: every P value of the
	// settings' grid policies (paw, pace), ascending. Partials of other
	// settings do not merge.
	Classes []int
	Windows []PartialWindow
	// End holds, after the last window, the gaps still open at the end of
	// the trace (Open, ending at len(Windows)) and as Alive the alive
	// page-windows of the whole trace.
	End PartialWindow
}

// A PartialWindow is what some partitions contribute to one window w: the
// accessed pages |A_w| and alive pages, and the histograms of the gaps
// walked in w: the closed ones (ending in w) and the open ones (ending in
// w+1).
type PartialWindow struct {
	Accessed, Alive int64
	Closed, Open    []trace.GapCount
}

// reset empties w, keeping its memory.
func (w *PartialWindow) reset() {
	w.Accessed, w.Alive, w.Closed, w.Open = 0, 0, w.Closed[:0], w.Open[:0]
}

// add merges o into w: the counts add, and o's histogram entries join w's
// (the engines add up entries of the same idle length and class).
func (w *PartialWindow) add(o *PartialWindow) {
	w.Accessed += o.Accessed
	w.Alive += o.Alive
	w.Closed = append(w.Closed, o.Closed...)
	w.Open = append(w.Open, o.Open...)
}

// compact sums w's entries of the same idle length and class, in (idle,
// class) order: the same histograms, each pair once.
func (w *PartialWindow) compact() {
	w.Closed, w.Open = compactCounts(w.Closed), compactCounts(w.Open)
}

func compactCounts(es []trace.GapCount) []trace.GapCount {
	slices.SortFunc(es, func(a, b trace.GapCount) int {
		return cmp.Or(cmp.Compare(a.Idle, b.Idle), cmp.Compare(a.Class, b.Class))
	})
	out := es[:0]
	for _, e := range es {
		if e.N == 0 {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].Idle == e.Idle && out[k].Class == e.Class {
			out[k].N += e.N
			continue
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil // as decoded
	}
	return out
}

// feedWindow hands window w's sums and histograms over the trace's
// partitions to the engines.
func (s *stream) feedWindow(w int, sum *PartialWindow) {
	s.p.mark(markNew, w, 0)
	s.t.accessed = append(s.t.accessed, sum.Accessed)
	s.t.alive = append(s.t.alive, sum.Alive)
	s.p.group(w, true, sum.Closed)
	s.p.group(w+1, false, sum.Open)
	s.p.mark(markEnd, w, sum.Accessed)
}

// feedEnd hands the gaps still open after the last window (windows) and
// the trace's alive page-windows (end.Alive) to the engines, and stops
// the pipeline.
func (s *stream) feedEnd(windows int, end *PartialWindow) {
	s.p.group(windows, false, end.Open)
	s.t.L = end.Alive
	s.stop()
}

// histogramsOnly reports whether every engine of s takes gaps by histogram
// alone (not lopp's gap-by-gap engines, nor lru's, which reads windows).
func (s *stream) histogramsOnly() bool { return histogramsOnly(s.engines) }

func histogramsOnly(engines []engine) bool {
	for _, e := range engines {
		if _, lru := e.(*lruEngine); lru || e.needsGaps() {
			return false
		}
	}
	return true
}

// ErrNotMergeable is returned by [WalkPartitions] and [Partial.Results]
// for settings whose engines need more than gap histograms: lopp's
// (feature-based, rationed, idle-time) and lru's.
var ErrNotMergeable = errors.New("mpc: these settings need more than gap histograms (lopp ranks gaps one by one, lru whole windows): they do not run partition by partition")

// Mergeable reports whether settings run partition by partition
// ([WalkPartitions]); an error is the settings' own.
func Mergeable(settings []policy.Setting) (bool, error) {
	engines, _, _, err := plan(settings)
	if err != nil {
		return false, err
	}
	return histogramsOnly(engines), nil
}

// WalkPartitions walks partitions lo .. hi-1 of a partitioned trace of
// every page (pr is told to read only them: SelectPartitionRange) for
// settings, and returns their partial. The trace's reader is consumed.
// Settings that are not [Mergeable] give ErrNotMergeable; a sampled trace
// is refused (its estimates and bounds need the whole sample's pass).
func WalkPartitions(ctx context.Context, pr trace.PartitionedReader, lo, hi int, settings []policy.Setting) (*Partial, error) {
	h := pr.Header()
	parts := pr.Partitioning()
	switch {
	case !h.Sample.All():
		return nil, fmt.Errorf("mpc: a %s sample is not walked partition by partition: its estimates need the whole sample's pass", h.Sample)
	case lo < 0 || hi > parts.Count || lo >= hi:
		return nil, fmt.Errorf("mpc: partitions %d..%d of a trace of %d", lo, hi-1, parts.Count)
	}
	engines, _, classes, err := plan(settings)
	if err != nil {
		return nil, err
	}
	if !histogramsOnly(engines) {
		return nil, ErrNotMergeable
	}
	pr.SelectPartitionRange(lo, hi)
	if d, ok := pr.(trace.PageDiscarder); ok {
		d.DiscardPages()
	}
	ps := make([]int, 0, hi-lo)
	for p := lo; p < hi; p++ {
		ps = append(ps, p)
	}
	pw := newPartWorker(pr, classes, ps)
	defer pw.close()
	out := &Partial{PageSize: int64(h.PageSize), Partitions: parts, Ranges: [][2]int{{lo, hi}}, Classes: slices.Clone(classes.vals)}
	own := func(o *PartialWindow) PartialWindow {
		c := PartialWindow{Accessed: o.Accessed, Alive: o.Alive, Closed: slices.Clone(o.Closed), Open: slices.Clone(o.Open)}
		c.compact()
		return c
	}
	var win PartialWindow
	for {
		first, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for w := first; w < first+n; w++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if pw.window(w, &win); pw.err != nil {
				return nil, pw.err
			}
			out.Windows = append(out.Windows, own(&win))
		}
	}
	pw.finish(&win)
	out.End = own(&win)
	return out, nil
}

// Merge adds o, the partial of other partitions of the same trace for the
// same settings, into p: window by window, the counts add and the
// histograms' entries join (PartialWindow.add, the merge mdk mpc's
// partitioned pass makes), then are summed pair by pair to keep p small.
// Merging is associative and commutative: any tree of merges gives the
// same partial.
func (p *Partial) Merge(o *Partial) error {
	switch {
	case p.PageSize != o.PageSize || p.Partitions.Count != o.Partitions.Count || p.Partitions.Seed != o.Partitions.Seed || len(p.Windows) != len(o.Windows):
		return fmt.Errorf("mpc: partials of two traces (%d-byte pages, %d partitions, %d windows; %d-byte pages, %d partitions, %d windows)",
			p.PageSize, p.Partitions.Count, len(p.Windows), o.PageSize, o.Partitions.Count, len(o.Windows))
	case !slices.Equal(p.Partitions.Cuts, o.Partitions.Cuts):
		// The same count and seed with other cuts (a version 4 trace's
		// equal partitions against version 5's ladder, say) are other
		// pages: partition i of one is not partition i of the other.
		return fmt.Errorf("mpc: partials of two traces with the same %d partitions cut differently (%v; %v)",
			p.Partitions.Count, p.Partitions.Cuts, o.Partitions.Cuts)
	case !slices.Equal(p.Classes, o.Classes):
		return errors.New("mpc: partials of different settings (their paw and pace P values differ)")
	}
	rs, err := mergeRanges(p.Ranges, o.Ranges)
	if err != nil {
		return err
	}
	p.Ranges = rs
	for w := range p.Windows {
		p.Windows[w].add(&o.Windows[w])
		p.Windows[w].compact()
	}
	p.End.add(&o.End)
	p.End.compact()
	return nil
}

// mergeRanges returns the union of two sets of disjoint ascending ranges,
// adjacent ones joined, or an error if they overlap (a partition merged
// twice would count its pages twice).
func mergeRanges(a, b [][2]int) ([][2]int, error) {
	all := slices.Concat(a, b)
	slices.SortFunc(all, func(x, y [2]int) int { return cmp.Compare(x[0], y[0]) })
	var out [][2]int
	for _, r := range all {
		if k := len(out) - 1; k >= 0 {
			if r[0] < out[k][1] {
				return nil, fmt.Errorf("mpc: partition %d is in two partials", r[0])
			}
			if r[0] == out[k][1] {
				out[k][1] = r[1]
				continue
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Complete reports whether p holds every partition of its trace.
func (p *Partial) Complete() bool {
	return len(p.Ranges) == 1 && p.Ranges[0] == [2]int{0, p.Partitions.Count}
}

// Results runs settings (those p was walked for) over the merged partial
// of every partition: the engines are fed window by window as mdk mpc's
// partitioned pass feeds them, and the results are that pass's (and the
// unpartitioned one's), integer for integer, in the order of settings.
func (p *Partial) Results(ctx context.Context, settings []policy.Setting) ([]*result.Result, error) {
	if !p.Complete() {
		return nil, fmt.Errorf("mpc: the partials merged hold partitions %v of %d, not all of them", p.Ranges, p.Partitions.Count)
	}
	room := newRoom(len(settings))
	if err := room.check(len(p.Windows)); err != nil {
		return nil, err
	}
	st, classes, _, err := newEngines(settings)
	if err != nil {
		return nil, err
	}
	defer st.stop()
	budget := room.tableBudget()
	st.reserve(len(p.Windows), &budget)
	if !st.histogramsOnly() {
		return nil, ErrNotMergeable
	}
	if !slices.Equal(classes.vals, p.Classes) {
		return nil, errors.New("mpc: the partial was walked for other settings (their paw and pace P values differ)")
	}
	for w := range p.Windows {
		if w%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		st.feedWindow(w, &p.Windows[w])
	}
	st.feedEnd(len(p.Windows), &p.End)
	return st.results(settings, p.PageSize, 1), nil
}

// partialMagic starts a Partial's encoding (MarshalBinary); the cuts
// follow the seed. partialMagic1 starts the encoding of the mdk before
// trace version 5, without cuts (its partials decode with nil cuts, and
// merge only with each other).
var (
	partialMagic  = []byte("mdkpart2")
	partialMagic1 = []byte("mdkpart1")
)

// MarshalBinary encodes p: a magic, then varints (docs/fleet.md): the
// page size, the partitions and their seed, the number of cuts (0 if p has
// none, else partitions + 1) and the cuts as deltas, the ranges, the
// classes, then
// per window and for End its two counts and its two histograms, each as
// its length and (idle as a delta from the previous entry's, class,
// count) entries in (idle, class) order.
func (p *Partial) MarshalBinary() ([]byte, error) {
	b := slices.Clone(partialMagic)
	u := func(x uint64) { b = binary.AppendUvarint(b, x) }
	i := func(x int64) { b = binary.AppendVarint(b, x) }
	i(p.PageSize)
	i(int64(p.Partitions.Count))
	u(p.Partitions.Seed)
	i(int64(len(p.Partitions.Cuts)))
	var prevCut uint32
	for _, c := range p.Partitions.Cuts {
		i(int64(c - prevCut))
		prevCut = c
	}
	i(int64(len(p.Ranges)))
	for _, r := range p.Ranges {
		i(int64(r[0]))
		i(int64(r[1]))
	}
	i(int64(len(p.Classes)))
	for _, c := range p.Classes {
		i(int64(c))
	}
	hist := func(es []trace.GapCount) {
		i(int64(len(es)))
		var prev int32
		for _, e := range es {
			i(int64(e.Idle - prev))
			i(int64(e.Class))
			i(e.N)
			prev = e.Idle
		}
	}
	win := func(w *PartialWindow) {
		i(w.Accessed)
		i(w.Alive)
		hist(w.Closed)
		hist(w.Open)
	}
	i(int64(len(p.Windows)))
	for k := range p.Windows {
		win(&p.Windows[k])
	}
	win(&p.End)
	return b, nil
}

// UnmarshalBinary decodes MarshalBinary's encoding; damage is an error
// naming the byte offset, never a panic.
func (p *Partial) UnmarshalBinary(b []byte) error {
	if len(b) < len(partialMagic) {
		return errors.New("mpc: not an encoded partial (bad magic)")
	}
	withCuts := string(b[:len(partialMagic)]) == string(partialMagic)
	if !withCuts && string(b[:len(partialMagic1)]) != string(partialMagic1) {
		return errors.New("mpc: not an encoded partial (bad magic)")
	}
	d := partialDecoder{b: b, off: len(partialMagic)}
	var q Partial
	q.PageSize = d.int("page size", 1, 1<<40)
	q.Partitions.Count = int(d.int("partitions", 1, trace.MaxPartitions))
	q.Partitions.Seed = d.uint("seed")
	if withCuts {
		if nc := d.int("cuts", 0, int64(q.Partitions.Count)+1); nc > 0 {
			if nc != int64(q.Partitions.Count)+1 {
				d.fail(fmt.Sprintf("%d cuts for %d partitions", nc, q.Partitions.Count))
			}
			q.Partitions.Cuts = make([]uint32, 0, nc)
			var c int64
			for range nc {
				c += d.int("cut delta", 0, 1_000_000-c)
				q.Partitions.Cuts = append(q.Partitions.Cuts, uint32(c))
			}
			if err := q.Partitions.Validate(); err != nil {
				d.fail(err.Error())
			}
		}
	}
	nr := d.int("ranges", 0, int64(q.Partitions.Count))
	for range nr {
		lo := d.int("range start", 0, int64(q.Partitions.Count)-1)
		hi := d.int("range end", lo+1, int64(q.Partitions.Count))
		q.Ranges = append(q.Ranges, [2]int{int(lo), int(hi)})
	}
	nc := d.int("classes", 0, int64(len(b)))
	if nc > 0 {
		q.Classes = make([]int, 0, nc)
	}
	for range nc {
		q.Classes = append(q.Classes, int(d.int("class", math.MinInt64, math.MaxInt64)))
	}
	classes := int64(len(q.Classes)) + 1
	hist := func(what string) []trace.GapCount {
		n := d.int(what+" entries", 0, int64(len(b)-d.off))
		if n == 0 {
			return nil
		}
		es := make([]trace.GapCount, 0, n)
		var prev int64
		for range n {
			idle := prev + d.int(what+" idle delta", 0, 1<<31-1)
			if idle > 1<<31-1 {
				d.fail(what + " idle length past 2^31")
			}
			es = append(es, trace.GapCount{Idle: int32(idle), Class: int32(d.int(what+" class", 0, classes-1)), N: d.int(what+" count", 1, 1<<62)})
			prev = idle
		}
		return es
	}
	win := func(w *PartialWindow) {
		w.Accessed = d.int("accessed count", 0, 1<<62)
		w.Alive = d.int("alive count", 0, 1<<62)
		w.Closed = hist("closed gaps'")
		w.Open = hist("open gaps'")
	}
	nw := d.int("windows", 0, int64(len(b)-d.off))
	if d.err == nil && nw > 0 {
		q.Windows = make([]PartialWindow, nw)
	}
	for k := range q.Windows {
		if d.err != nil {
			break
		}
		win(&q.Windows[k])
	}
	win(&q.End)
	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Sprintf("%d unexpected bytes after the partial", len(b)-d.off))
	}
	if d.err != nil {
		return d.err
	}
	if _, err := mergeRanges(q.Ranges, nil); err != nil || !slices.IsSortedFunc(q.Ranges, func(x, y [2]int) int { return cmp.Compare(x[0], y[0]) }) {
		return errors.New("mpc: encoded partial: its partition ranges overlap or are out of order")
	}
	*p = q
	return nil
}

// partialDecoder reads varints, failing once with the offset of the
// first bad one.
type partialDecoder struct {
	b   []byte
	off int
	err error
}

func (d *partialDecoder) fail(msg string) {
	if d.err == nil {
		d.err = fmt.Errorf("mpc: encoded partial, byte offset %d: %s", d.off, msg)
	}
}

func (d *partialDecoder) uint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail(what + ": truncated or overlong varint")
		return 0
	}
	d.off += n
	return x
}

// int reads a signed varint that must be in [lo, hi].
func (d *partialDecoder) int(what string, lo, hi int64) int64 {
	if d.err != nil {
		return lo
	}
	x, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail(what + ": truncated or overlong varint")
		return lo
	}
	if x < lo || x > hi {
		d.fail(fmt.Sprintf("%s %d out of range [%d, %d]", what, x, lo, hi))
		return lo
	}
	d.off += n
	return x
}
