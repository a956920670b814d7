package mpc

import (
	"runtime"
	"sync"
	"sync/atomic"

	"mdk/policy"
	"mdk/trace"
)

// The pipeline hands gaps from the walking goroutine to the engines' worker
// goroutines in chunks. A chunk holds up to chunkGaps gaps (16 bytes each,
// plus 24 bytes of features when an engine needs them) and the window marks
// interleaved with them; chunks are recycled, so the memory in flight is
// bounded by chunks*chunkGaps whatever the trace. A pipeline may have
// smaller chunks (pipeline.size: a sampled run's sub-samples'), and a
// chunk's gaps are allocated when the first is queued (none are when every
// engine takes histograms).
const (
	chunkGaps = 1 << 15
	chunks    = 4
)

// packedGap is a trace.Gap without its page, in 16 bytes.
type packedGap struct {
	start, idle, prior int32 // prior -1: infinite
	closed             bool
}

const (
	markNew   = iota // engines' newWindow(w)
	markEnd          // engines' endWindow(w, accessed)
	markGroup        // engines' group(w, closed, entries[lo:hi])
)

type mark struct {
	at       int // the mark applies before gaps[at]
	kind     int
	w        int
	accessed int64
	closed   bool
	lo, hi   int // entries of a group
}

type chunk struct {
	gaps    []packedGap
	feats   []policy.Features
	ranks   []int32
	entries []histEntry
	marks   []mark
	refs    atomic.Int32
}

type pipeline struct {
	workers  [][]engine
	in       []chan *chunk
	free     chan *chunk
	cur      *chunk
	size     int // gaps, marks or histogram entries a chunk holds: chunkGaps unless set
	needFeat bool
	needRank bool
	wg       sync.WaitGroup
}

func newPipeline(engines []engine, needFeat, needRank bool) *pipeline {
	n := min(runtime.GOMAXPROCS(0), len(engines))
	n = max(n, 1)
	p := &pipeline{workers: make([][]engine, n), size: chunkGaps, needFeat: needFeat, needRank: needRank, free: make(chan *chunk, chunks)}
	for i, e := range engines {
		p.workers[i%n] = append(p.workers[i%n], e)
	}
	for range chunks {
		p.free <- &chunk{}
	}
	for _, es := range p.workers {
		in := make(chan *chunk, chunks)
		p.in = append(p.in, in)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for c := range in {
				for _, e := range es {
					c.apply(e)
				}
				if c.refs.Add(-1) == 0 {
					c.gaps, c.feats, c.ranks, c.marks, c.entries = c.gaps[:0], c.feats[:0], c.ranks[:0], c.marks[:0], c.entries[:0]
					p.free <- c
				}
			}
		}()
	}
	p.cur = <-p.free
	return p
}

// gap queues one gap; f is its features (nil unless needed), rank its
// touch's rank in its window (if needed).
func (p *pipeline) gap(g trace.Gap, f *policy.Features, rank int32) {
	prior := int32(-1)
	if g.Prior != trace.Inf {
		prior = int32(g.Prior)
	}
	c := p.cur
	if c.gaps == nil {
		c.gaps = make([]packedGap, 0, p.size)
	}
	c.gaps = append(c.gaps, packedGap{start: int32(g.Start), idle: int32(g.Idle), prior: prior, closed: g.Closed})
	if p.needFeat {
		c.feats = append(c.feats, *f)
	}
	if p.needRank {
		c.ranks = append(c.ranks, rank)
	}
	if len(c.gaps) >= p.size {
		p.flush()
	}
}

// mark queues a window's start or end. A chunk also ends after p.size
// marks, so that a run of empty windows does not grow one chunk without
// bound.
func (p *pipeline) mark(kind, w int, accessed int64) {
	p.cur.marks = append(p.cur.marks, mark{at: len(p.cur.gaps), kind: kind, w: w, accessed: accessed})
	if len(p.cur.marks) >= p.size {
		p.flush()
	}
}

// group queues the histogram entries of gaps ending in window end.
func (p *pipeline) group(end int, closed bool, es []histEntry) {
	c := p.cur
	if c.entries == nil {
		// The chunk's first entries: room for a full chunk, so that
		// filling it allocates once (recycled chunks keep theirs).
		c.entries = make([]histEntry, 0, max(p.size, len(es)))
	}
	lo := len(c.entries)
	c.entries = append(c.entries, es...)
	c.marks = append(c.marks, mark{at: len(c.gaps), kind: markGroup, w: end, closed: closed, lo: lo, hi: len(c.entries)})
	if len(c.entries) >= p.size || len(c.marks) >= p.size {
		p.flush()
	}
}

// flush sends the current chunk to every worker and takes a free one.
func (p *pipeline) flush() {
	c := p.cur
	c.refs.Store(int32(len(p.in)))
	for _, in := range p.in {
		in <- c
	}
	p.cur = <-p.free
}

// stop sends what is queued and waits for the workers to finish.
func (p *pipeline) stop() {
	p.flush()
	for _, in := range p.in {
		close(in)
	}
	p.wg.Wait()
}

// apply feeds the chunk's gaps (to an engine that needs them one by one)
// or its histogram groups, and its marks, in order, to e.
func (c *chunk) apply(e engine) {
	perGap := e.needsGaps()
	gi := 0
	run := func(end int) {
		if perGap && end > gi {
			var fs []policy.Features
			if len(c.feats) > 0 {
				fs = c.feats[gi:end]
			}
			var rs []int32
			if len(c.ranks) > 0 {
				rs = c.ranks[gi:end]
			}
			e.gaps(c.gaps[gi:end], fs, rs)
		}
		gi = end
	}
	for _, m := range c.marks {
		run(m.at)
		switch m.kind {
		case markNew:
			e.newWindow(m.w)
		case markEnd:
			e.endWindow(m.w, m.accessed)
		case markGroup:
			if !perGap {
				e.group(m.w, m.closed, c.entries[m.lo:m.hi])
			}
		}
	}
	run(len(c.gaps))
}
