package policy

import (
	"fmt"
	"strconv"
	"sync"
)

// Scorer is a trained model as L-OPP uses it (a *gbdt.Model): a score for a
// row of features.
type Scorer interface {
	NumFeatures() int
	Score(x []float64) float64
}

// LOPP is the learned policy L-OPP (SPEC section 2): right after a touch, it
// reclaims the page when the model's score for the touch's features is at
// least Theta. The features are PageState.Features ([Features]): the life's
// last six prior reuse distances, most recent first, -1 where missing. The model is trained
// (package lopp) to predict whether OPP would reclaim the gap; Theta in [0, 1]
// sweeps the curve: 0 reclaims after every touch, values above every score
// reclaim nothing.
//
// Model must be set, with 6 features ([LOPP.Validate]); it is shared, not
// copied, by every decider.
type LOPP struct {
	Theta float64
	Model Scorer
}

func (p LOPP) Policy() string { return "lopp" }
func (p LOPP) Params() string { return "theta=" + strconv.FormatFloat(p.Theta, 'g', -1, 64) }

func (p LOPP) NewDecider([]int64) Decider { return p }

// Reclaim reclaims at the end of the touch's window if the score is >= Theta.
func (p LOPP) Reclaim(s *PageState) bool {
	return s.Now == s.LastTouch && p.Score(&s.Features) >= p.Theta
}

// Score returns the model's score for a touch's features.
func (p LOPP) Score(f *Features) float64 {
	// The row goes through an interface, so a local array would escape:
	// one allocation per score. Rows are reused instead.
	x := rows.Get().(*[NumFeatures]float64)
	*x = f.Float64()
	s := p.Model.Score(x[:])
	rows.Put(x)
	return s
}

// rows are the model input rows of Score.
var rows = sync.Pool{New: func() any { return new([NumFeatures]float64) }}

// Validate reports whether the setting can run: a model with 6 features and
// Theta in [0, 1].
func (p LOPP) Validate() error {
	switch {
	case p.Model == nil:
		return fmt.Errorf("policy lopp: no model")
	case p.Model.NumFeatures() != NumFeatures:
		return fmt.Errorf("policy lopp: the model takes %d features: want %d (the last six prior reuse distances)", p.Model.NumFeatures(), NumFeatures)
	case !(p.Theta >= 0 && p.Theta <= 1):
		return fmt.Errorf("policy lopp: theta %g: want in [0, 1]", p.Theta)
	}
	return nil
}

// Param, CriticalOf and DelayIsParam make LOPP a [FeatureParam]: a setting
// reclaims a gap exactly when Theta <= the score of its touch, so the score
// is the critical value.
func (p LOPP) Param() float64                 { return p.Theta }
func (p LOPP) CriticalOf(f *Features) float64 { return p.Score(f) }
func (p LOPP) DelayIsParam() bool             { return false }

var _ FeatureParam = LOPP{}

// AttachModel gives every LOPP and LOPPRation setting in ss the model m and
// checks it; with a model of [NumIdleFeatures] features a LOPP setting
// becomes the [LOPPIdle] of its theta (a ration with one is refused). It is
// an error if ss holds an LOPP setting and m is nil (a nil interface: pass
// nil, not a nil *gbdt.Model).
func AttachModel(ss []Setting, m Scorer) error {
	for i, s := range ss {
		var v interface{ Validate() error }
		switch l := s.(type) {
		case LOPP:
			l.Model = m
			v = l
			if m != nil && m.NumFeatures() == NumIdleFeatures {
				v = LOPPIdle{Theta: l.Theta, Model: m} // an idle-time model
			}
		case LOPPIdle:
			l.Model = m
			v = l
		case LOPPRation:
			l.Model = m
			v = l
		default:
			continue
		}
		if m == nil {
			return fmt.Errorf("%w: give one with --model FILE (train it with mdk lopp train)", ErrNoModel)
		}
		if err := v.Validate(); err != nil {
			return err
		}
		ss[i] = v.(Setting)
	}
	return nil
}
