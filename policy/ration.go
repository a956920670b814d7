package policy

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// LOPPRation is L-OPP with a per-window ration (docs/lopp.md, "The
// per-window ration"): at the end of window k, of the resident pages
// touched in window k whose score is at least Theta, it reclaims the
// B_k = PPM*|A_k| div 1e6 best scored (highest score first, ties to the
// lower dense page ID), all of them if there are fewer. The spec is
// lopp:theta=T,q=Q; without q it is the unrationed [LOPP].
//
// It decides a window's pages together ([WindowDecider]): its decider's
// per-page Reclaim panics, so every caller must use [DecideWindow].
type LOPPRation struct {
	Theta float64
	PPM   int64 // q in parts per million
	Model Scorer
}

func (p LOPPRation) Policy() string { return "lopp" }
func (p LOPPRation) Params() string {
	return "theta=" + strconv.FormatFloat(p.Theta, 'g', -1, 64) + ",q=" + FormatRate(p.PPM)
}

// Budget returns B_k for a window with accessed pages.
func (p LOPPRation) Budget(accessed int64) int64 { return p.PPM * accessed / MaxPPM }

// Unrationed returns the setting without its ration.
func (p LOPPRation) Unrationed() LOPP { return LOPP{Theta: p.Theta, Model: p.Model} }

// Validate reports whether the setting can run: [LOPP.Validate]'s checks
// and q in [0, 100%].
func (p LOPPRation) Validate() error {
	if err := p.Unrationed().Validate(); err != nil {
		return err
	}
	if p.PPM < 0 || p.PPM > MaxPPM {
		return fmt.Errorf("policy lopp: q %d ppm: want 0 to %d", p.PPM, MaxPPM)
	}
	return nil
}

// NewDecider returns the ration's decider, a [WindowDecider].
func (p LOPPRation) NewDecider([]int64) Decider { return rationRun{p} }

type rationRun struct{ p LOPPRation }

func (rationRun) Reclaim(*PageState) bool {
	panic("policy: a rationed lopp decides a window at a time: call policy.DecideWindow")
}

// ReclaimWindow implements the ration's rule.
func (r rationRun) ReclaimWindow(accessed int64, states []PageState, reclaim []bool) {
	type cand struct {
		i     int
		score float64
	}
	var cs []cand
	l := r.p.Unrationed()
	for i := range states {
		s := &states[i]
		if s.Now != s.LastTouch {
			continue
		}
		if sc := l.Score(&s.Features); sc >= r.p.Theta {
			cs = append(cs, cand{i, sc})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(states[a.i].Page, states[b.i].Page)
	})
	for _, c := range cs[:min(int64(len(cs)), r.p.Budget(accessed))] {
		reclaim[c.i] = true
	}
}

// WindowDecider is a Decider that sees every candidate of a window before
// it reclaims any (L-OPP's ration). Callers give it through [DecideWindow].
type WindowDecider interface {
	Decider
	// ReclaimWindow sets reclaim[i] for each of states that is reclaimed
	// at the end of window states[i].Now. states are every resident alive
	// page at the end of that window, in dense-ID order; accessed is
	// |A_Now|.
	ReclaimWindow(accessed int64, states []PageState, reclaim []bool)
}

// DecideWindow decides the pages states (every resident alive page at the
// end of one window, in dense-ID order) under dec, with |A_w| = accessed,
// and sets reclaim[i] (len(states) long, false on entry) for each page
// reclaimed: by [WindowDecider.ReclaimWindow] if dec is one, else by dec's
// Reclaim, page by page in order.
func DecideWindow(dec Decider, accessed int64, states []PageState, reclaim []bool) {
	if w, ok := dec.(WindowDecider); ok {
		w.ReclaimWindow(accessed, states, reclaim)
		return
	}
	for i := range states {
		reclaim[i] = dec.Reclaim(&states[i])
	}
}

// rationGrid is the ration grid [RationGrid] returns.
var rationGrid = []int64{
	1000, 2500, 5000, 7500, 10000, 12500, 15000, 17500, 20000, 25000, 30000, 40000,
	50000, 75000, 100000, 150000, 200000, 300000, 500000,
}

// RationGrid returns the ration settings mdk lopp train --ration tries
// besides the theta grid: lopp:theta=0,q=Q for Q = 0.1%, 0.25%, then 0.5%
// to 2% by 0.25%, 2.5%, 3%, 4%, 5%, 7.5%, 10%, 15%, 20%, 30% and 50% (19
// settings), without a model until [AttachModel].
func RationGrid() []Setting {
	out := make([]Setting, 0, len(rationGrid))
	for _, q := range rationGrid {
		out = append(out, LOPPRation{PPM: q})
	}
	return out
}

var _ Setting = LOPPRation{}
