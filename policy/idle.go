package policy

import (
	"fmt"
	"strconv"
	"sync"
)

// NumIdleFeatures is the number of features of an idle-time L-OPP model:
// the six of a touch ([Features]) and the page's idle time.
const NumIdleFeatures = NumFeatures + 1

// MaxIdleFeature caps the idle-time feature: a page idle longer is scored
// as idle this long, so every gap's decisions are made in its first
// MaxIdleFeature+1 windows' scores.
const MaxIdleFeature = 64

// IdleFeature returns the idle-time feature of a page touched last in
// window last, at the end of window now: min(now-last, MaxIdleFeature).
func IdleFeature(now, last int) int { return min(now-last, MaxIdleFeature) }

// LOPPIdle is L-OPP with idle time (docs/lopp.md, "Idle time"): at the end
// of every window k of a gap, not only the touch's, the model scores the
// page from its touch's features and its idle time min(k-i, 64) (i its last
// touch), and the page is reclaimed at the first k whose score is at least
// Theta. Its model has [NumIdleFeatures] features; [AttachModel] makes a
// lopp:theta=T setting a LOPPIdle when the model has 7.
type LOPPIdle struct {
	Theta float64
	Model Scorer
}

func (p LOPPIdle) Policy() string             { return "lopp" }
func (p LOPPIdle) Params() string             { return "theta=" + strconv.FormatFloat(p.Theta, 'g', -1, 64) }
func (p LOPPIdle) NewDecider([]int64) Decider { return p }

// Reclaim reclaims a resident page whose score at its idle time is at least
// Theta.
func (p LOPPIdle) Reclaim(s *PageState) bool {
	return p.Score(&s.Features, IdleFeature(s.Now, s.LastTouch)) >= p.Theta
}

// Score returns the model's score of a page with its touch's features f,
// idle for idle windows (already capped).
func (p LOPPIdle) Score(f *Features, idle int) float64 {
	x := idleRows.Get().(*[NumIdleFeatures]float64)
	for i, v := range f {
		x[i] = float64(v)
	}
	x[NumFeatures] = float64(idle)
	s := p.Model.Score(x[:])
	idleRows.Put(x)
	return s
}

var idleRows = sync.Pool{New: func() any { return new([NumIdleFeatures]float64) }}

// Validate reports whether the setting can run: a model with 7 features
// and Theta in [0, 1].
func (p LOPPIdle) Validate() error {
	switch {
	case p.Model == nil:
		return fmt.Errorf("policy lopp: no model")
	case p.Model.NumFeatures() != NumIdleFeatures:
		return fmt.Errorf("policy lopp: an idle-time model takes %d features, not %d", NumIdleFeatures, p.Model.NumFeatures())
	case !(p.Theta >= 0 && p.Theta <= 1):
		return fmt.Errorf("policy lopp: theta %g: want in [0, 1]", p.Theta)
	}
	return nil
}

var _ Setting = LOPPIdle{}
