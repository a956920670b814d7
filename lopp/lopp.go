// Package lopp owns the training data of the learned policy L-OPP (SPEC
// section 2): one row per touch of every life, its features and its label.
//
//   - Features: the life's last six prior reuse distances at the touch, most
//     recent first, -1 where missing. A life's first touch has prior reuse
//     distance ∞, which counts as missing, so its features are all -1; the
//     second touch's are (d, -1, -1, -1, -1, -1), and so on. They are a
//     [policy.Features], computed by its Next, the rule the simulator and
//     the generator use too.
//   - Label: whether OPP at a target rate (default 2%, 20000 ppm) reclaims
//     the gap that starts at the touch. Every open gap with g >= 1 is
//     reclaimed; of the closed gaps with g >= 1 ending in window j, the
//     B_j = ppm*|A_j| div 1e6 longest are. Gaps of equal length ending in the
//     same window start in the same window; among those, lower dense page
//     IDs are taken first.
//   - Censoring: a touch whose gap is still open when the reading stops (at
//     the end of the span, or of the trace) has no known label: its next
//     touch or its life's end lies beyond the windows read. OPP reclaims such
//     a gap for free, so its label would say "reclaimed" whatever the page
//     does next. [Data.Labelled] leaves these touches out; it is what a model
//     is trained on.
//
// [Dataset] reads a trace once, streaming, with a [trace.Walker]. To keep a
// training part honest it can stop at a window: the trace is then labelled
// as if it ended there.
package lopp

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"mdk/policy"
	"mdk/trace"
)

// NumFeatures is the number of features of a touch (policy.Features).
const NumFeatures = policy.NumFeatures

// DefaultPPM is the default OPP target of the labels: 2%.
const DefaultPPM = 20000

// Span is a range of windows [From, To). To < 0 means the end of the trace.
type Span struct{ From, To int }

// All is every window of a trace.
var All = Span{0, -1}

// String formats s as "A..B" (B exclusive), or "A.." when it runs to the end.
func (s Span) String() string {
	if s.To < 0 {
		return fmt.Sprintf("%d..", s.From)
	}
	return fmt.Sprintf("%d..%d", s.From, s.To)
}

// Data is a labelled data set: row i is the touch of page Page[i] in window
// Window[i], its features X[i*NumFeatures : (i+1)*NumFeatures] and its label
// Y[i]. Rows are in the order of touches: by window, then as the
// [trace.Walker] reports them.
type Data struct {
	Span    Span // the windows asked for
	PPM     int64
	Windows int // windows read: Span.To, or the trace's length if shorter

	X      []float64
	Y      []bool
	Window []int32
	Page   []uint32
	// Idle and Closed describe the gap after the touch, in the trace as
	// read (up to Windows): OPP saves Idle page-windows when Y is true.
	Idle   []int32
	Closed []bool
	// Censored marks the touches whose gap was still open when the reading
	// stopped: the life was alive at the end of the windows read. Their Y
	// is OPP's decision on the windows read (an open gap with g >= 1 is
	// reclaimed for free), not a label to learn from.
	Censored []bool
}

// Labelled returns the features (NumFeatures per row) and labels of the
// rows whose label is known: every row but the censored ones. A model is
// trained on these.
func (d *Data) Labelled() (x []float64, y []bool) {
	n := 0
	for _, c := range d.Censored {
		if !c {
			n++
		}
	}
	x, y = make([]float64, 0, n*NumFeatures), make([]bool, 0, n)
	for i, c := range d.Censored {
		if !c {
			x = append(x, d.Row(i)...)
			y = append(y, d.Y[i])
		}
	}
	return x, y
}

// NumCensored returns the number of censored rows.
func (d *Data) NumCensored() int {
	n := 0
	for _, c := range d.Censored {
		if c {
			n++
		}
	}
	return n
}

// Len returns the number of rows.
func (d *Data) Len() int { return len(d.Y) }

// Row returns the features of row i.
func (d *Data) Row(i int) []float64 { return d.X[i*NumFeatures : (i+1)*NumFeatures] }

// Positives returns the number of rows labelled true.
func (d *Data) Positives() int {
	n := 0
	for _, y := range d.Y {
		if y {
			n++
		}
	}
	return n
}

// ErrSpan is wrapped by errors about a bad window range.
var ErrSpan = errors.New("lopp: bad window range")

// Dataset reads the trace r and returns one row for every touch in a window
// of span, labelled by OPP at ppm parts per million.
//
// Only windows before span.To are read: the lives still alive there end at
// span.To, so their last gaps are open, and their touches are censored
// (their labels are unknown; [Data.Labelled] leaves them out), as are those
// of the lives alive at the end of the trace. Nothing after span.To affects
// any row, which keeps a model trained on span blind to the windows after it.
// Touches before span.From are read for their history (features) and for
// OPP's budgets, but give no rows.
func Dataset(r trace.Reader, ppm int64, span Span) (*Data, error) {
	if ppm < 0 || ppm > 1_000_000 {
		return nil, fmt.Errorf("lopp: rate %d ppm: want 0..1000000", ppm)
	}
	if span.From < 0 || (span.To >= 0 && span.To < span.From) {
		return nil, fmt.Errorf("%w: %v", ErrSpan, span)
	}
	d := &Data{Span: span, PPM: ppm}
	var (
		feat []policy.Features
		row  []int32 // row of the page's last touch; -1 if outside span
		cand []candidate
		// finishing is set while the Walker ends the lives alive at the
		// end of the windows read: their open gaps are censored.
		finishing bool
	)
	in := func(w int) bool { return w >= span.From && (span.To < 0 || w < span.To) }
	wk := trace.NewWalker()
	// 1. Every touch: update the life's features; in span, add a row
	//    labelled false for now.
	wk.OnTouch = func(page uint32, t, prior int, born bool) {
		feat[page] = feat[page].Next(prior)
		if !in(t) {
			row[page] = -1
			return
		}
		row[page] = int32(len(d.Y))
		for _, v := range feat[page] {
			d.X = append(d.X, float64(v))
		}
		d.Y = append(d.Y, false)
		d.Window = append(d.Window, int32(t))
		d.Page = append(d.Page, page)
		d.Idle = append(d.Idle, 0)
		d.Closed = append(d.Closed, false)
		d.Censored = append(d.Censored, false)
	}
	// 2. Every gap, as it becomes known (before the touch that closes it):
	//    record its length; an open gap with g >= 1 is reclaimed; a closed
	//    one with g >= 1 competes for the budget of its ending window.
	wk.OnGap = func(g trace.Gap) {
		k := row[g.Page]
		if k >= 0 {
			d.Idle[k] = int32(g.Idle)
			d.Closed[k] = g.Closed
			d.Censored[k] = finishing
		}
		if g.Idle < 1 {
			return
		}
		if !g.Closed {
			if k >= 0 {
				d.Y[k] = true
			}
			return
		}
		cand = append(cand, candidate{page: g.Page, idle: int32(g.Idle), row: k})
	}
	for {
		if span.To >= 0 && wk.Windows() == span.To {
			break
		}
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("lopp: %w", err)
		}
		for range w.NumNew() {
			feat = append(feat, policy.Features{})
			row = append(row, -1)
		}
		wk.Window(w)
		// 3. Window j = w.Index is walked: every closed gap ending in it is
		//    known. The B_j longest are reclaimed (ties: lower page ID).
		budget := ppm * int64(len(w.Accessed)) / 1_000_000
		if int64(len(cand)) > budget {
			slices.SortFunc(cand, func(a, b candidate) int {
				if a.idle != b.idle {
					return int(b.idle - a.idle)
				}
				return int(int64(a.page) - int64(b.page))
			})
			cand = cand[:budget]
		}
		for _, c := range cand {
			if c.row >= 0 {
				d.Y[c.row] = true
			}
		}
		cand = cand[:0]
	}
	// 4. Lives alive at the end of what was read end there: open gaps,
	//    censored.
	finishing = true
	wk.Finish()
	d.Windows = wk.Windows()
	return d, nil
}

type candidate struct {
	page uint32
	idle int32
	row  int32
}

// IdleAges are the idle times at which [Data.IdleRows] gives a gap a row:
// 0 (the touch) to 4, then 6, 8, 12, 16, 24, 32, 48 and 64
// (policy.MaxIdleFeature), at most 13 rows a touch.
var IdleAges = []int{0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}

// IdleRows returns the training rows of an idle-time model
// (policy.LOPPIdle, policy.NumIdleFeatures per row): for every labelled row
// (not censored) with gap idle length g, and every age a of [IdleAges] with
// a <= g (the page is still idle at the end of window touch+a), the touch's
// features followed by a, labelled Y && g-a >= 1 (OPP reclaims the gap, and
// reclaiming it now still saves a page-window). At a = 0 that is the
// touch's own label. Rows are in the order of the touches, then of a.
func (d *Data) IdleRows() (x []float64, y []bool) {
	for i, c := range d.Censored {
		if c {
			continue
		}
		g := int(d.Idle[i])
		for _, a := range IdleAges {
			if a > g {
				break
			}
			x = append(x, d.Row(i)...)
			x = append(x, float64(a))
			y = append(y, d.Y[i] && g-a >= 1)
		}
	}
	return x, y
}
