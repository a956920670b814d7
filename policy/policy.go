package policy

import (
	"fmt"
	"strconv"

	"mdk/trace"
)

// Inf is an infinite window-count parameter (pace's and paw's P = inf).
const Inf = trace.Inf

// PageState is what the simulator knows about one resident, alive page at
// the end of window Now.
//
// LastTouch and Prior are what an online policy may use. Idle and Closed
// describe the gap that started at LastTouch; they come from the future and
// only offline policies (vmin, opp) may look at them.
type PageState struct {
	Page      uint32 // dense page ID
	Now       int    // k: the window whose end this is
	LastTouch int    // i: the last touch of the page's life, i <= Now
	Prior     int    // d: prior reuse distance at i (Inf on the life's first touch)
	Idle      int    // g: idle length of the gap starting at i (oracle)
	Closed    bool   // the gap ends with an access (oracle)
	// Features are the features at LastTouch (what L-OPP scores): the
	// life's last six prior reuse distances, most recent (Prior) first.
	Features Features
}

// Setting is one policy with all its parameters fixed.
type Setting interface {
	Policy() string // the policy's name, as on the command line: "age"
	Params() string // the parameters in spec syntax, without the name: "A=20"
	// NewDecider returns the decision state of one run. accessed holds |A_w|
	// for every window of the trace.
	NewDecider(accessed []int64) Decider
}

// Decider decides, for one run, which resident pages to reclaim.
type Decider interface {
	// Reclaim reports whether the page is reclaimed at the end of s.Now.
	Reclaim(s *PageState) bool
}

// Offline is implemented by the settings that decide from the future: the
// oracle's idle length of a gap (PageState.Idle, Closed) or every window's
// |A_w| given to NewDecider. They run only where the whole trace is known in
// advance (the simulator, a replay); a live agent refuses them.
type Offline interface {
	Offline() bool
}

// IsOffline reports whether s decides from the future ([Offline]).
func IsOffline(s Setting) bool {
	o, ok := s.(Offline)
	return ok && o.Offline()
}

// String formats a setting as a full spec: "age:A=20".
func String(s Setting) string { return s.Policy() + ":" + s.Params() }

func fmtCount(n int) string {
	if n == Inf {
		return "inf"
	}
	return strconv.Itoa(n)
}

// AGE reclaims a page once it has been idle for A windows: a gap starting at
// touch i is reclaimed at the end of i+A if g >= A, saving g-A.
type AGE struct{ A int }

func (p AGE) Policy() string             { return "age" }
func (p AGE) Params() string             { return "A=" + fmtCount(p.A) }
func (p AGE) NewDecider([]int64) Decider { return p }
func (p AGE) Reclaim(s *PageState) bool  { return s.Now-s.LastTouch == p.A }

// VMIN reclaims, right after its last touch, every page whose next idle gap
// is longer than T windows (an oracle).
type VMIN struct{ T int }

func (p VMIN) Policy() string             { return "vmin" }
func (p VMIN) Params() string             { return "T=" + fmtCount(p.T) }
func (p VMIN) NewDecider([]int64) Decider { return p }
func (p VMIN) Reclaim(s *PageState) bool  { return s.Now == s.LastTouch && s.Idle > p.T }

// Offline is true: VMIN reads the gap's idle length in advance.
func (p VMIN) Offline() bool { return true }

// PAW (prior-access wait) reclaims a page that has waited Wait idle windows,
// if its prior reuse distance d is greater than P.
type PAW struct{ P, Wait int }

func (p PAW) Policy() string             { return "paw" }
func (p PAW) Params() string             { return "P=" + fmtCount(p.P) + ",wait=" + fmtCount(p.Wait) }
func (p PAW) NewDecider([]int64) Decider { return p }
func (p PAW) Reclaim(s *PageState) bool {
	return s.Prior > p.P && s.Now-s.LastTouch == p.Wait
}

// PACE reclaims right after the touch if the prior reuse distance d is
// greater than P, and otherwise behaves as AGE(A).
type PACE struct{ P, A int }

func (p PACE) Policy() string             { return "pace" }
func (p PACE) Params() string             { return "P=" + fmtCount(p.P) + ",A=" + fmtCount(p.A) }
func (p PACE) NewDecider([]int64) Decider { return p }
func (p PACE) Reclaim(s *PageState) bool {
	if s.Prior > p.P {
		return s.Now == s.LastTouch
	}
	return s.Now-s.LastTouch == p.A
}

// OPP is the optimal performance proxy at target rate PPM/1e6. Every open gap
// with g >= 1 is reclaimed right after its touch; of the closed gaps with
// g >= 1 ending in window j, the B_j = PPM*|A_j| div 1e6 longest are.
type OPP struct{ PPM int64 }

// MaxPPM is a rate of 100%.
const MaxPPM = 1_000_000

func (p OPP) Policy() string { return "opp" }
func (p OPP) Params() string { return "r=" + FormatRate(p.PPM) }

// Offline is true: OPP reads every window's accesses and gaps in advance.
func (p OPP) Offline() bool { return true }

// Budget returns B_w for a window with accessed pages.
func (p OPP) Budget(accessed int64) int64 { return p.PPM * accessed / MaxPPM }

// NewDecider returns OPP's run state: the budget left in each window. The
// simulator calls Reclaim for pages in time order of their touch, so granting
// budget first come, first served gives, for each window j, its budget to the
// gaps that start earliest, which are the longest (SPEC section 2).
func (p OPP) NewDecider(accessed []int64) Decider {
	left := make([]int64, len(accessed))
	for w, a := range accessed {
		left[w] = p.Budget(a)
	}
	return &oppRun{left: left}
}

type oppRun struct{ left []int64 }

func (o *oppRun) Reclaim(s *PageState) bool {
	if s.Now != s.LastTouch || s.Idle < 1 {
		return false
	}
	if !s.Closed {
		return true
	}
	j := s.LastTouch + s.Idle + 1
	if o.left[j] > 0 {
		o.left[j]--
		return true
	}
	return false
}

// FormatRate formats a rate in parts per million as a percentage that
// parses back to the same value: 20000 -> "2%", 5000 -> "0.5%".
func FormatRate(ppm int64) string {
	// ppm/10000 percent, exactly.
	whole := ppm / 10000
	frac := ppm % 10000
	if frac == 0 {
		return strconv.FormatInt(whole, 10) + "%"
	}
	s := fmt.Sprintf("%d.%04d", whole, frac)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return s + "%"
}

var (
	_ Setting = AGE{}
	_ Setting = VMIN{}
	_ Setting = PAW{}
	_ Setting = PACE{}
	_ Setting = OPP{}
)
