package policy

import (
	"math"

	"mdk/trace"
)

// OneParam is a policy with one numeric parameter whose settings are ordered
// by aggression: the setting with parameter x reclaims a gap exactly when
// x <= Critical(gap). Implementing it (besides [Setting], for the
// simulator) is all a policy needs for the one-pass curve generator (package
// mpc), which checks each gap against every setting at once. AGE, VMIN and
// LOPP are OneParam; see docs/policies.md for a worked example.
type OneParam interface {
	Setting
	// Param returns the setting's parameter x.
	Param() float64
	// Critical returns the largest x whose setting reclaims g, or
	// math.Inf(-1) if none does. features are L-OPP's features at g.Start
	// (only filled when the policy reports UsesFeatures).
	Critical(g trace.Gap, features *[6]int) float64
	// DelayIsParam reports whether a reclaimed gap is reclaimed x windows
	// after its touch, saving g-x; otherwise it is reclaimed at the end of
	// the touch's window and saves g. (x must then be a whole number.)
	DelayIsParam() bool
	// UsesFeatures reports whether Critical reads features.
	UsesFeatures() bool
}

// FeaturesOnly is implemented by OneParam policies whose critical value
// depends on the features alone (L-OPP's model score): the generator then
// computes it once per distinct feature vector.
type FeaturesOnly interface {
	FeaturesOnly() bool
}

// Never is the critical value of a gap that no setting reclaims.
var Never = math.Inf(-1)

func (p AGE) Param() float64                           { return float64(p.A) }
func (p AGE) Critical(g trace.Gap, _ *[6]int) float64  { return float64(g.Idle) }
func (p AGE) DelayIsParam() bool                       { return true }
func (p AGE) UsesFeatures() bool                       { return false }
func (p VMIN) Param() float64                          { return float64(p.T) }
func (p VMIN) Critical(g trace.Gap, _ *[6]int) float64 { return float64(g.Idle - 1) }
func (p VMIN) DelayIsParam() bool                      { return false }
func (p VMIN) UsesFeatures() bool                      { return false }

var (
	_ OneParam = AGE{}
	_ OneParam = VMIN{}
)
