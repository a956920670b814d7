package lopp

import (
	"errors"

	"mdk/gbdt"
	"mdk/trace"
)

// Trained is a model fitted by [Train] and what it was fitted on.
type Trained struct {
	Model *gbdt.Model
	// Rows are the labelled touches the model was fitted on (censored ones
	// left out), Positives those labelled reclaimed, Censored the touches
	// left out (their gap open at the end of the windows read).
	Rows, Positives, Censored int
	// Right counts the fitted rows the model classifies as labelled (score
	// >= 0.5 for reclaimed): the training accuracy is Right/Rows.
	Right int
}

// Accuracy returns the training accuracy, Right/Rows.
func (t *Trained) Accuracy() float64 { return float64(t.Right) / float64(t.Rows) }

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
	d, err := Dataset(r, ppm, fit)
	if err != nil {
		return nil, err
	}
	x, y := d.Labelled()
	if len(y) == 0 {
		return nil, ErrNoLabels
	}
	t := &Trained{Rows: len(y), Censored: d.NumCensored()}
	d = nil // the rows are in x and y now
	if t.Model, err = gbdt.Train(x, NumFeatures, y, cfg); err != nil {
		return nil, err
	}
	for i, v := range y {
		if v {
			t.Positives++
		}
		if (t.Model.Score(x[i*NumFeatures:(i+1)*NumFeatures]) >= 0.5) == v {
			t.Right++
		}
	}
	return t, nil
}
