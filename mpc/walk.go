package mpc

import (
	"cmp"
	"runtime"
	"slices"

	"mdk/policy"
	"mdk/trace"
)

// maxWalkers bounds the goroutines of the histogram walk.
const maxWalkers = 4

// walk is how Generate finds a window's gaps: one by one with a
// trace.Walker when an engine needs each gap ([gapWalk]), else counted in
// histograms by a trace.HistWalker on several cores ([histWalk]).
type walk interface {
	start(w *trace.Window) // begins walking a window
	wait()                 // returns when the window is walked
	finish(censor bool)    // ends the lives still alive; censor: their gaps go nowhere
	counts() trace.Counts
	// histograms are the walk's gap histograms, drained after every
	// window; nil if no engine takes gaps by histogram.
	histograms() []*trace.GapHistogram
	close()
}

// newWalk returns the walk the engines need: gaps one by one (with their
// features if needFeat, and their touches' ranks by rank's score if rank is
// not nil) if any engine needsGaps, else histograms, counted on up to
// walkers goroutines.
func newWalk(engines []engine, classes classAxis, p *pipeline, needFeat bool, rank *policy.LOPP, walkers int) walk {
	perGap, hist := false, false
	for _, e := range engines {
		perGap = perGap || e.needsGaps()
		hist = hist || !e.needsGaps()
	}
	newHist := func() *trace.GapHistogram { return trace.NewGapHistogram(len(classes.vals)+1, classes.class) }
	if perGap {
		g := &gapWalk{wk: trace.NewWalker(), p: p, needFeat: needFeat || rank != nil, rank: rank}
		if rank != nil {
			g.scores = map[policy.Features]float64{}
		}
		if hist {
			g.hg = newHist()
		}
		g.wk.OnGap = g.gap
		if needFeat {
			g.wk.OnTouch = g.touch
		}
		return g
	}
	// One histogram a goroutine; each is windows x classes cells, so a
	// many-core machine uses a few cores, not all.
	var hgs []*trace.GapHistogram
	for range max(1, min(runtime.GOMAXPROCS(0), walkers)) {
		hgs = append(hgs, newHist())
	}
	return &histWalk{hw: trace.NewHistWalker(hgs), hgs: hgs}
}

// gapWalk feeds every gap to the pipeline as the walker finds it, and also
// counts it in a histogram (hg) when some engines take histograms.
type gapWalk struct {
	wk *trace.Walker
	p  *pipeline
	hg *trace.GapHistogram // nil if every engine needs gaps
	// needFeat: an engine needs the gaps' features, kept by page in feats.
	needFeat bool
	feats    []policy.Features
	censored bool // Finish's open gaps are dropped
	// rank, if not nil, ranks the touches of every window by its score
	// (highest first, ties to the lower page), into ranks by page: what a
	// rationed lopp's engine needs ([ranker]). touched are the pages
	// touched in the window being walked, scores a cache by features.
	rank    *policy.LOPP
	ranks   []int32
	touched []uint32
	scores  map[policy.Features]float64
	order   []scored
}

// scored is a touch and its score.
type scored struct {
	page  uint32
	score float64
}

func (g *gapWalk) gap(gp trace.Gap) {
	if g.censored {
		return
	}
	var f *policy.Features
	if g.needFeat {
		f = &g.feats[gp.Page]
	}
	var r int32
	if g.rank != nil {
		r = g.ranks[gp.Page]
	}
	g.p.gap(gp, f, r)
	if g.hg != nil {
		g.hg.Add(gp)
	}
}

func (g *gapWalk) touch(page uint32, t, prior int, born bool) {
	for int(page) >= len(g.feats) {
		g.feats = append(g.feats, policy.Features{})
	}
	g.feats[page] = g.feats[page].Next(prior)
	if g.rank != nil {
		for int(page) >= len(g.ranks) {
			g.ranks = append(g.ranks, 0)
		}
		g.touched = append(g.touched, page)
	}
}

// rankTouches ranks the touches of the window just walked: the rank of a
// touch is the number of the window's touches with a higher score, or an
// equal score and a lower page (every touch ranked ahead scores at least as
// much, so the rank is the same among the touches at or above any theta).
func (g *gapWalk) rankTouches() {
	g.order = g.order[:0]
	for _, p := range g.touched {
		s, ok := g.scores[g.feats[p]]
		if !ok {
			s = g.rank.Score(&g.feats[p])
			if len(g.scores) < maxCache {
				g.scores[g.feats[p]] = s
			}
		}
		g.order = append(g.order, scored{p, s})
	}
	slices.SortFunc(g.order, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.page, b.page)
	})
	for i, t := range g.order {
		g.ranks[t.page] = int32(i)
	}
	g.touched = g.touched[:0]
}

func (g *gapWalk) start(w *trace.Window) {
	if g.hg != nil {
		g.hg.Grow(w.Index)
	}
	g.wk.Window(w)
	if g.rank != nil {
		g.rankTouches()
	}
}

func (g *gapWalk) wait() {}
func (g *gapWalk) finish(censor bool) {
	g.censored = censor
	g.wk.Finish()
}
func (g *gapWalk) counts() trace.Counts { return g.wk.Counts }
func (g *gapWalk) close()               {}
func (g *gapWalk) histograms() []*trace.GapHistogram {
	if g.hg == nil {
		return nil
	}
	return []*trace.GapHistogram{g.hg}
}

// histWalk counts the gaps in one histogram per goroutine of a
// trace.HistWalker.
type histWalk struct {
	hw  *trace.HistWalker
	hgs []*trace.GapHistogram
}

func (h *histWalk) start(w *trace.Window)             { h.hw.Start(w) }
func (h *histWalk) wait()                             { h.hw.Wait() }
func (h *histWalk) finish(bool)                       { h.hw.Finish() }
func (h *histWalk) counts() trace.Counts              { return h.hw.Counts }
func (h *histWalk) histograms() []*trace.GapHistogram { return h.hgs }
func (h *histWalk) close()                            { h.hw.Close() }
