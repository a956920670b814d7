package tune

import (
	"fmt"
	"time"

	"mdk/policy"
	"mdk/result"
)

// This file exports the rules of [Run] for callers that run the settings
// themselves (package fleet runs every setting of a job once and derives its
// curves and its tuned settings from the same runs).

// DefaultWindowSplit returns Run's default window split of a trace of w
// windows: the first floor(w/2) windows train, the others evaluate. It fails
// when w < 2. name is used in the error.
func DefaultWindowSplit(name string, w int) (train, eval Range, err error) {
	tr, ev, _, err := windowSplit(name, w, nil, nil)
	if err != nil {
		return Range{}, Range{}, fmt.Errorf("tune: %w", err)
	}
	return tr[0], ev[0], nil
}

// YardstickSettings returns the OPP settings Run adds for its yardstick:
// OPP's default grid and OPP at the SLO's bound.
func YardstickSettings(window time.Duration, slo SLO) []policy.Setting {
	return append(policy.DefaultGrid("opp", window), policy.OPP{PPM: slo.PPM})
}

// Measure returns r's metrics under s, as Run reports them for a part.
func (s SLO) Measure(r *result.Result) *Metrics {
	return &Metrics{
		Stat:             r.Stat(s.Stat),
		Savings:          r.Savings(),
		SavedPageWindows: r.Saved,
		AlivePageWindows: r.Alive,
		Promotions:       r.TotalPromotions(),
		Windows:          r.Windows(),
		BrokenWindows:    s.BrokenWindows(r),
		MeetsSLO:         s.Meets(r),
	}
}
