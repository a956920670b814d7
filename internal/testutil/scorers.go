package testutil

// TieScorer is a hand-made L-OPP model of a touch's 6 features (a
// policy.Scorer) with seven distinct scores, so that many touches of a
// window tie and the page order decides a ration.
type TieScorer struct{}

func (TieScorer) NumFeatures() int { return 6 }
func (TieScorer) Score(x []float64) float64 {
	v := int(3*x[0]+5*x[1]+x[2]) % 7
	return float64((v+7)%7) / 6
}

// IdleScorer is a hand-made idle-time L-OPP model (7 features, the last the
// idle time, capped at 64 by the policy): its score rises and falls over a
// page's first 8 idle windows, is 0.95 at the cap and 1 past it (where a
// capped feature never goes).
type IdleScorer struct{}

func (IdleScorer) NumFeatures() int { return 7 }
func (IdleScorer) Score(x []float64) float64 {
	switch {
	case x[6] > 64:
		return 1
	case x[6] == 64:
		return 0.95
	}
	v := (int(2*x[0]+x[1]) + 3*min(int(x[6]), 7)) % 11
	return float64((v+11)%11) / 10
}
