package tune

import (
	"fmt"
	"strconv"
	"strings"

	"mdk/result"
)

// Range is an inclusive range of windows, First..Last, as written on the
// command line (the same convention as the ranges of policy specs, SPEC
// section 5: 0..119 is 120 windows).
type Range struct{ First, Last int }

// ParseRange parses FIRST..LAST (inclusive, FIRST <= LAST, both >= 0).
func ParseRange(s string) (Range, error) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		return Range{}, fmt.Errorf("bad window range %q: want FIRST..LAST such as 0..119 (inclusive)", s)
	}
	first, err := parseWindow(s, strings.TrimSpace(lo))
	if err != nil {
		return Range{}, err
	}
	last, err := parseWindow(s, strings.TrimSpace(hi))
	if err != nil {
		return Range{}, err
	}
	if last < first {
		return Range{}, fmt.Errorf("bad window range %q: last window %d is before first window %d", s, last, first)
	}
	return Range{first, last}, nil
}

func parseWindow(rng, s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("bad window range %q: %q is not a window number (want a non-negative integer)", rng, s)
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad window range %q: window %s is too large", rng, s)
	}
	return int(n), nil
}

// String formats r as ParseRange reads it.
func (r Range) String() string { return strconv.Itoa(r.First) + ".." + strconv.Itoa(r.Last) }

// Len returns the number of windows in r.
func (r Range) Len() int { return r.Last - r.First + 1 }

func (r Range) overlap(o Range) (Range, bool) {
	x := Range{max(r.First, o.First), min(r.Last, o.Last)}
	return x, x.First <= x.Last
}

// Segment is one piece of a part: windows First..Last (inclusive) of one
// trace.
type Segment struct {
	Trace        string `json:"trace"`
	First        int    `json:"first_window"`
	Last         int    `json:"last_window"`
	TraceWindows int    `json:"trace_windows"` // W of the whole trace
}

// Windows returns the number of windows in the segment.
func (s Segment) Windows() int { return s.Last - s.First + 1 }

// String describes the segment: "x.mdkt windows 0..119 (120 of 240)".
func (s Segment) String() string {
	if s.First == 0 && s.Last == s.TraceWindows-1 {
		return fmt.Sprintf("%s whole trace, windows 0..%d (%d)", s.Trace, s.Last, s.TraceWindows)
	}
	return fmt.Sprintf("%s windows %d..%d (%d of %d)", s.Trace, s.First, s.Last, s.Windows(), s.TraceWindows)
}

// Part is the training or the evaluation part: its segments, pooled.
type Part struct {
	Windows  int       `json:"windows"` // total over the segments
	Segments []Segment `json:"segments"`
}

func (p *Part) add(s Segment) {
	p.Segments = append(p.Segments, s)
	p.Windows += s.Windows()
}

// complement returns the windows of 0..w-1 outside r: up to two ranges.
func complement(r Range, w int) []Range {
	var out []Range
	if r.First > 0 {
		out = append(out, Range{0, r.First - 1})
	}
	if r.Last < w-1 {
		out = append(out, Range{r.Last + 1, w - 1})
	}
	return out
}

// windowSplit returns the training and evaluation ranges of a trace of w
// windows: train and eval as given (nil: the default, or the complement of
// the other one). It also reports the windows both contain, if any.
func windowSplit(name string, w int, train, eval *Range) (tr, ev []Range, overlap *Range, err error) {
	check := func(what string, r *Range) error {
		if r != nil && r.Last >= w {
			return fmt.Errorf("%s windows %s go past the end of %s, which has %d windows (0..%d)", what, r, name, w, w-1)
		}
		return nil
	}
	if err := check("train", train); err != nil {
		return nil, nil, nil, err
	}
	if err := check("eval", eval); err != nil {
		return nil, nil, nil, err
	}
	switch {
	case train == nil && eval == nil:
		if w < 2 {
			return nil, nil, nil, fmt.Errorf("%s has %d window(s): need at least 2 to split into train and eval halves", name, w)
		}
		h := w / 2
		return []Range{{0, h - 1}}, []Range{{h, w - 1}}, nil, nil
	case eval == nil:
		tr, ev = []Range{*train}, complement(*train, w)
		if len(ev) == 0 {
			return nil, nil, nil, fmt.Errorf("train windows %s cover all of %s: no windows left to evaluate on (give eval windows)", train, name)
		}
	case train == nil:
		tr, ev = complement(*eval, w), []Range{*eval}
		if len(tr) == 0 {
			return nil, nil, nil, fmt.Errorf("eval windows %s cover all of %s: no windows left to train on (give train windows)", eval, name)
		}
	default:
		tr, ev = []Range{*train}, []Range{*eval}
		if o, ok := train.overlap(*eval); ok {
			overlap = &o
		}
	}
	return tr, ev, overlap, nil
}

// pool concatenates restricted results into one: the statistic of the
// pooled result is over the union of the windows, its savings ΣS/ΣL.
func pool(rs []*result.Result) *result.Result {
	if len(rs) == 1 {
		return rs[0]
	}
	out := &result.Result{Policy: rs[0].Policy, Params: rs[0].Params, PageSize: rs[0].PageSize, SamplePPM: rs[0].SamplePPM}
	// Sub-samples pool group by group, when every segment has the same.
	k := len(rs[0].Groups)
	for _, r := range rs {
		if len(r.Groups) != k || r.SamplePPM != out.SamplePPM {
			k = 0
		}
	}
	for g := range k {
		gs := make([]*result.Result, len(rs))
		for i, r := range rs {
			gs[i] = r.Groups[g]
		}
		out.Groups = append(out.Groups, pool(gs))
	}
	for _, r := range rs {
		out.Promotions = append(out.Promotions, r.Promotions...)
		out.Accessed = append(out.Accessed, r.Accessed...)
		out.SavedPerWindow = append(out.SavedPerWindow, r.SavedPerWindow...)
		out.AlivePerWindow = append(out.AlivePerWindow, r.AlivePerWindow...)
		out.Saved += r.Saved
		out.Alive += r.Alive
	}
	return out
}
