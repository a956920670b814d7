package tune

import (
	"time"

	"mdk/policy"
	"mdk/tier"
)

// ParseSenpai parses a senpai controller spec ([policy.ParseSenpai]) whose
// pressure is modelled on tier t ([ParseController]): each promotion stalls
// the job for the tier's mean swap-in latency. A spec that gives swapin_ns
// itself (a run's recorded setting) needs no tier; otherwise t is
// required, and both is an error.
func ParseSenpai(spec string, t *tier.Tier) (*policy.Senpai, error) {
	if !policy.IsSenpai(spec) {
		_, err := policy.ParseSenpai(spec)
		return nil, err
	}
	// senpai does not use the window length; ParseController wants one.
	c, err := ParseController(spec, time.Second, t)
	if err != nil {
		return nil, err
	}
	return c.(*policy.Senpai), nil
}
