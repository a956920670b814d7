package policy

import "mdk/trace"

// NumFeatures is the number of features of a touch.
const NumFeatures = 6

// Missing is the value of a feature that does not exist.
const Missing = -1

// Features are the features of a touch (SPEC section 2, L-OPP): the life's
// last six prior reuse distances, most recent first, Missing where there is
// none. A life's first touch has prior reuse distance ∞, which counts as
// missing, so its features are all Missing; the history restarts with every
// life. [Features.Next] is the one update rule: the simulator (PageState),
// the generator and L-OPP's training data (package lopp) all use it.
type Features [NumFeatures]int32

// Next returns the features of a touch with prior reuse distance prior
// (trace.Inf on a life's first touch), given the features f of the previous
// touch of the same life (ignored on a first touch).
func (f Features) Next(prior int) Features {
	if prior == trace.Inf {
		return Features{Missing, Missing, Missing, Missing, Missing, Missing}
	}
	copy(f[1:], f[:NumFeatures-1])
	f[0] = int32(prior)
	return f
}

// Float64 returns the features as a model's input row.
func (f *Features) Float64() [NumFeatures]float64 {
	var x [NumFeatures]float64
	for i, v := range f {
		x[i] = float64(v)
	}
	return x
}
