package lopp

import (
	"errors"

	"mdk/gbdt"
	"mdk/policy"
	"mdk/trace"
)

// Trained is a model fitted by [Train] and what it was fitted on.
type Trained struct {
	Model *gbdt.Model
	// Rows are the labelled touches the model was fitted on (censored ones
	// left out), Positives those labelled reclaimed, Censored the touches
	// left out (their gap open at the end of the windows read).
	Rows, Positives, Censored int
	// IdleRows and IdlePositives, for an idle-time model ([TrainIdle]),
	// count its rows ([Data.IdleRows]) and those labelled reclaim-now; 0
	// otherwise.
	IdleRows, IdlePositives int
	// Right counts the fitted rows the model classifies as labelled (score
	// >= 0.5 for reclaimed): the training accuracy is Right over the rows
	// fitted on (Rows, or IdleRows for an idle-time model).
	Right int
}

// Accuracy returns the training accuracy: Right over the rows fitted on.
func (t *Trained) Accuracy() float64 {
	if t.IdleRows > 0 {
		return float64(t.Right) / float64(t.IdleRows)
	}
	return float64(t.Right) / float64(t.Rows)
}

// ErrNoLabels is returned by [Train] when the fit windows hold no touch
// with a known label.
var ErrNoLabels = errors.New("no touch with a known label")

// Train fits L-OPP's classifier (mdk lopp train): it labels every touch in
// the fit windows with whether OPP at ppm reclaims the gap after it
// ([Dataset], reading only those windows, so nothing after them leaks into
// the model), leaves the censored touches out ([Data.Labelled]) and trains
// gradient-boosted trees with cfg on the rest. The fit windows are the
// training part of tune's split less its validation windows
// (tune.ValidationSplit); choosing the model's theta is tune's
// (tune.ChooseTheta), on the validation windows, which the model was not
// fitted on.
func Train(r trace.Reader, ppm int64, fit Span, cfg gbdt.Config) (*Trained, error) {
	return train(r, ppm, fit, cfg, false)
}

// TrainIdle is [Train] for an idle-time model (policy.LOPPIdle): it fits on
// the labelled touches' idle-time rows ([Data.IdleRows], policy.NumIdleFeatures
// features), from the same data set.
func TrainIdle(r trace.Reader, ppm int64, fit Span, cfg gbdt.Config) (*Trained, error) {
	return train(r, ppm, fit, cfg, true)
}

func train(r trace.Reader, ppm int64, fit Span, cfg gbdt.Config, idle bool) (*Trained, error) {
	d, err := Dataset(r, ppm, fit)
	if err != nil {
		return nil, err
	}
	x, y := d.Labelled()
	if len(y) == 0 {
		return nil, ErrNoLabels
	}
	t := &Trained{Rows: len(y), Censored: d.NumCensored()}
	for _, v := range y {
		if v {
			t.Positives++
		}
	}
	nf := NumFeatures
	if idle {
		x, y = d.IdleRows()
		nf = policy.NumIdleFeatures
		t.IdleRows = len(y)
		for _, v := range y {
			if v {
				t.IdlePositives++
			}
		}
	}
	d = nil // the rows are in x and y now
	if t.Model, err = gbdt.Train(x, nf, y, cfg); err != nil {
		return nil, err
	}
	for i, v := range y {
		if (t.Model.Score(x[i*nf:(i+1)*nf]) >= 0.5) == v {
			t.Right++
		}
	}
	return t, nil
}
