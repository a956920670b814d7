package policy

import (
	"math"

	"mdk/trace"
)

// Ordered is what every one-parameter policy family has: a parameter that
// orders its settings by aggression, and whether a reclaimed gap's saving
// depends on it.
type Ordered interface {
	Setting
	// Param returns the setting's parameter x.
	Param() float64
	// DelayIsParam reports whether a reclaimed gap is reclaimed x windows
	// after its touch, saving g-x; otherwise it is reclaimed at the end of
	// the touch's window and saves g. (x must then be a whole number.)
	DelayIsParam() bool
}

// OneParam is a policy with one numeric parameter whose settings are ordered
// by aggression: the setting with parameter x reclaims a gap exactly when
// x <= Critical(gap). Implementing it (besides [Setting], for the
// simulator) is all a policy needs for the one-pass curve generator (package
// mpc), which checks each gap against every setting at once. AGE and VMIN
// are OneParam; see docs/policies.md for a worked example.
type OneParam interface {
	Ordered
	// Critical returns the largest x whose setting reclaims g, or
	// math.Inf(-1) ([Never]) if none does.
	Critical(g trace.Gap) float64
}

// FeatureParam is a one-parameter policy whose critical value is a function
// of the features of the gap's touch alone (L-OPP's model score): the
// setting x reclaims the gap exactly when x <= CriticalOf(features). The
// generator then tracks every page's [Features] and computes the critical
// value once per distinct feature vector.
type FeatureParam interface {
	Ordered
	CriticalOf(f *Features) float64
}

// Never is the critical value of a gap that no setting reclaims.
var Never = math.Inf(-1)

func (p AGE) Param() float64                { return float64(p.A) }
func (p AGE) Critical(g trace.Gap) float64  { return float64(g.Idle) }
func (p AGE) DelayIsParam() bool            { return true }
func (p VMIN) Param() float64               { return float64(p.T) }
func (p VMIN) Critical(g trace.Gap) float64 { return float64(g.Idle - 1) }
func (p VMIN) DelayIsParam() bool           { return false }

var (
	_ OneParam = AGE{}
	_ OneParam = VMIN{}
)
