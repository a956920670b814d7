package mpc

// This file is the worked example of docs/policies.md, "Adding a policy":
// a complete single-parameter policy in one file. Implementing
// policy.Setting gives it the reference simulator; implementing
// policy.OneParam gives it the one-pass generator; the generic equality
// test below then checks the two against each other.

import (
	"fmt"
	"math"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

// DIST reclaims a page right after a touch whose prior reuse distance d is
// greater than D windows (a page that came back after a long absence is
// likely to leave again). The first touch of a life has d = inf, so it is
// always reclaimed. A reclaimed gap saves its whole idle length g.
type DIST struct{ D int }

// Setting: what the simulator asks.
func (p DIST) Policy() string                    { return "dist" }
func (p DIST) Params() string                    { return fmt.Sprintf("D=%d", p.D) }
func (p DIST) NewDecider([]int64) policy.Decider { return p }
func (p DIST) Reclaim(s *policy.PageState) bool {
	return s.Now == s.LastTouch && s.Prior > p.D
}

// OneParam: what the generator asks. The setting D reclaims a gap iff
// D <= d-1, so the critical value is d-1 (+inf on a life's first touch).
func (p DIST) Param() float64 { return float64(p.D) }
func (p DIST) Critical(g trace.Gap) float64 {
	if g.Prior == trace.Inf {
		return math.Inf(1)
	}
	return float64(g.Prior - 1)
}
func (p DIST) DelayIsParam() bool { return false } // reclaimed at the touch: saves g

var _ policy.OneParam = DIST{}

func TestExamplePolicyDIST(t *testing.T) {
	var ss []policy.Setting
	for d := 0; d <= 8; d++ {
		ss = append(ss, DIST{D: d})
	}
	rng := testutil.Rand(testutil.Seed(t, 7))
	for n := 0; n < testutil.Count(1000); n++ {
		checkEqual(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
}
