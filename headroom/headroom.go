// Package headroom splits the gap between a policy setting and a reference
// run (by default OPP at the setting's own promotion-rate statistic) into its
// causes, gap by gap (docs/headroom.md).
//
// Both runs come from the reference simulator (sim.RunAll, the two settings
// side by side, observed): every reclaim is attributed to the gap it
// reclaimed, the gaps themselves come from trace.Walker, and each gap falls in
// exactly one [Class]. The classes' savings and promotions add up exactly to
// the two runs' totals ([Comparison.Check]); each class is then split by what
// a designer can act on: the prior reuse distance at the touch, the idle
// length, the life's age and number of touches, the window, the address space
// and the memory region ([trace.Regions]).
//
// The package owns the comparison and its identity; it holds the trace in
// memory (as sim does) and a map entry per reclaimed gap.
package headroom

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strconv"

	"mdk/policy"
	"mdk/result"
	"mdk/sim"
	"mdk/trace"
)

// Class is where one gap falls when a setting is compared with a reference.
type Class int

const (
	// Same: both reclaim the gap at the end of the same window.
	Same Class = iota
	// Later: both reclaim it, the setting at a later window (savings lost
	// to waiting).
	Later
	// Earlier: both reclaim it, the setting at an earlier window. Empty
	// against OPP, which reclaims every gap it takes right after its touch.
	Earlier
	// Missed: the reference reclaims it, the setting does not.
	Missed
	// Spent: the setting reclaims it, the reference does not (a closed
	// gap's promotion spent where the reference would not).
	Spent
	// Neither reclaims it.
	Neither
	// NumClasses is the number of classes.
	NumClasses
)

// String returns the class's name as the text output prints it.
func (c Class) String() string {
	switch c {
	case Same:
		return "both, same window"
	case Later:
		return "both, setting later"
	case Earlier:
		return "both, setting earlier"
	case Missed:
		return "reference only (missed)"
	case Spent:
		return "setting only (spent)"
	case Neither:
		return "neither"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// Key returns the class's name in JSON and CSV: same, later, earlier,
// missed, spent, neither.
func (c Class) Key() string {
	return [...]string{"same", "later", "earlier", "missed", "spent", "neither"}[c]
}

// Tally sums gaps of one class. Index 0 of the pairs is the setting, 1 the
// reference.
type Tally struct {
	Gaps       int64    `json:"gaps"`
	Saved      [2]int64 `json:"saved_page_windows"` // page-windows saved in these gaps
	Promotions [2]int64 `json:"promotions"`         // promotions of these gaps
}

// Lost returns the reference's savings minus the setting's in these gaps:
// their share of the headroom, in page-windows.
func (t Tally) Lost() int64 { return t.Saved[1] - t.Saved[0] }

func (t *Tally) add(o Tally) {
	t.Gaps += o.Gaps
	for i := range 2 {
		t.Saved[i] += o.Saved[i]
		t.Promotions[i] += o.Promotions[i]
	}
}

// Gap is one gap as the comparison sees it: the trace's gap, where in its
// life it lies, and when each run reclaimed it (-1: not reclaimed).
type Gap struct {
	trace.Gap
	Age     int // windows from the life's start to the gap's touch (Start - life start)
	Touches int // touches of the life up to and including the gap's touch
	At      [2]int
	Class   Class
}

// saved returns the page-windows run i saves in g: the windows At+1 ..
// End()-1, none if not reclaimed.
func (g *Gap) saved(i int) int64 {
	if g.At[i] < 0 {
		return 0
	}
	return int64(g.Start + g.Idle - g.At[i])
}

func (g *Gap) tally() Tally {
	t := Tally{Gaps: 1}
	for i := range 2 {
		t.Saved[i] = g.saved(i)
		if g.At[i] >= 0 && g.Closed {
			t.Promotions[i] = 1
		}
	}
	return t
}

// classify returns the class of a gap reclaimed at a (setting) and b
// (reference), -1 meaning not reclaimed.
func classify(a, b int) Class {
	switch {
	case a < 0 && b < 0:
		return Neither
	case a < 0:
		return Missed
	case b < 0:
		return Spent
	case a == b:
		return Same
	case a > b:
		return Later
	}
	return Earlier
}

// Bucket is one value range of a split, with its gaps' tallies by class.
type Bucket struct {
	Key     int64             `json:"-"` // the order of the buckets
	Label   string            `json:"label"`
	Classes [NumClasses]Tally `json:"-"`
}

// Split is the comparison's gaps split by one dimension.
type Split struct {
	Dim     string    `json:"dim"`
	Buckets []*Bucket `json:"buckets"`
}

// Comparison is a setting compared gap by gap with a reference run.
type Comparison struct {
	Setting, Ref *result.Result
	Classes      [NumClasses]Tally
	Splits       []Split
	// RegionsFrom says where the regions came from (Options.RegionsFrom,
	// or "address ranges (no mappings)").
	RegionsFrom string
}

// Options are the optional parts of [Compare].
type Options struct {
	// Regions names the memory region of every page; nil: the address
	// ranges of [trace.AddressRanges].
	Regions *trace.Regions
	// RegionsFrom says where Regions came from, for the text output
	// ("" for the default).
	RegionsFrom string
	// OnGap, if set, is called for every gap once it is classified.
	OnGap func(*Gap)
}

// gapKey names a gap: its page and the touch it starts at.
type gapKey struct {
	page  uint32
	start int32
}

// observer records, for each gap either run reclaims, when each did.
type observer struct{ at map[gapKey][2]int32 }

func (o *observer) Reclaimed(i int, page uint32, start, at int) {
	k := gapKey{page, int32(start)}
	v, ok := o.at[k]
	if !ok {
		v = [2]int32{-1, -1}
	}
	v[i] = int32(at)
	o.at[k] = v
}

func (o *observer) GapEnded(uint32, int) {}

// Compare runs setting s and reference ref on t in the reference simulator
// and compares them gap by gap:
//
//  1. sim.RunAll runs both side by side; its observer notes, for each gap
//     a run reclaims (named by page and touch), the window at whose end it
//     did.
//  2. trace.Walker walks t's gaps; each gets the two reclaim windows (or
//     none), its class, its savings (End()-1-At) and promotion (1 if closed
//     and reclaimed) under each run, and is added to its class's tally and
//     to one bucket of every split.
//
// Regions in o default to [trace.AddressRanges] of t.
func Compare(ctx context.Context, t *trace.Trace, s, ref policy.Setting, o Options) (*Comparison, error) {
	if t.Header.Windows != 0 && t.Header.Windows != len(t.Windows) {
		return nil, fmt.Errorf("headroom: trace header says %d windows, holds %d", t.Header.Windows, len(t.Windows))
	}
	obs := &observer{at: map[gapKey][2]int32{}}
	rs, err := sim.RunAll(ctx, t, []policy.Setting{s, ref}, obs)
	if err != nil {
		return nil, err
	}
	regions := o.Regions
	if regions == nil {
		regions = trace.AddressRanges(t.Pages, t.Header.PageSize)
	}
	c := &Comparison{Setting: rs[0], Ref: rs[1], RegionsFrom: o.RegionsFrom}
	switch {
	case o.Regions == nil:
		c.RegionsFrom = "address ranges (no mappings)"
	case c.RegionsFrom == "":
		c.RegionsFrom = "given regions"
	}
	dims := newDims(t, regions)
	splits := make([]map[int64]*Bucket, len(dims))
	for i := range splits {
		splits[i] = map[int64]*Bucket{}
	}
	// The walker's per-life state: the life's start and its touches so far.
	lifeStart := make([]int32, len(t.Pages))
	touches := make([]int32, len(t.Pages))
	wk := trace.NewWalker()
	wk.OnTouch = func(page uint32, w, prior int, born bool) {
		if prior == trace.Inf {
			lifeStart[page], touches[page] = int32(w), 0
		}
		touches[page]++
	}
	var g Gap
	wk.OnGap = func(tg trace.Gap) {
		g = Gap{Gap: tg, Age: tg.Start - int(lifeStart[tg.Page]), Touches: int(touches[tg.Page]), At: [2]int{-1, -1}}
		if v, ok := obs.at[gapKey{tg.Page, int32(tg.Start)}]; ok {
			g.At = [2]int{int(v[0]), int(v[1])}
		}
		g.Class = classify(g.At[0], g.At[1])
		tl := g.tally()
		c.Classes[g.Class].add(tl)
		for i, d := range dims {
			k := d.key(&g)
			b := splits[i][k]
			if b == nil {
				b = &Bucket{Key: k, Label: d.label(k)}
				splits[i][k] = b
			}
			b.Classes[g.Class].add(tl)
		}
		if o.OnGap != nil {
			o.OnGap(&g)
		}
	}
	for w := range t.Windows {
		wk.Window(&t.Windows[w])
	}
	wk.Finish()
	for i, d := range dims {
		sp := Split{Dim: d.name}
		for _, b := range splits[i] {
			sp.Buckets = append(sp.Buckets, b)
		}
		slices.SortFunc(sp.Buckets, func(a, b *Bucket) int { return cmp.Compare(a.Key, b.Key) })
		c.Splits = append(c.Splits, sp)
	}
	if err := c.Check(); err != nil {
		panic("headroom: invariant violation: " + err.Error())
	}
	return c, nil
}

// Total returns the sum of the class tallies.
func (c *Comparison) Total() Tally {
	var t Tally
	for _, x := range c.Classes {
		t.add(x)
	}
	return t
}

// Check verifies the identity: the classes' savings and promotions add up
// to each run's totals (S and the sum of promotions_w, as the simulator
// counted them), and every split's buckets add up to the classes.
func (c *Comparison) Check() error {
	tot := c.Total()
	for i, r := range []*result.Result{c.Setting, c.Ref} {
		if tot.Saved[i] != r.Saved {
			return fmt.Errorf("%s:%s: classes save %d page-windows, the run %d", r.Policy, r.Params, tot.Saved[i], r.Saved)
		}
		if p := r.TotalPromotions(); tot.Promotions[i] != p {
			return fmt.Errorf("%s:%s: classes promote %d, the run %d", r.Policy, r.Params, tot.Promotions[i], p)
		}
	}
	for _, sp := range c.Splits {
		var sum [NumClasses]Tally
		for _, b := range sp.Buckets {
			for k := range NumClasses {
				sum[k].add(b.Classes[k])
			}
		}
		if sum != c.Classes {
			return fmt.Errorf("split by %s: buckets do not add up to the classes", sp.Dim)
		}
	}
	return nil
}

// Headroom returns the reference's savings minus the setting's, in page-windows.
func (c *Comparison) Headroom() int64 { return c.Ref.Saved - c.Setting.Saved }

// Points returns page-windows n as percentage points of alive page-windows.
func (c *Comparison) Points(n int64) float64 {
	if c.Ref.Alive == 0 {
		return 0
	}
	return 100 * float64(n) / float64(c.Ref.Alive)
}

// RateAt returns the OPP rate, in parts per million, at which OPP is
// compared with a run whose statistic st is x: the largest rate not above
// x, so that OPP's own statistic (at most its rate) is at most the run's.
func RateAt(x float64) int64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return policy.MaxPPM
	}
	ppm := int64(x * policy.MaxPPM)
	for ppm < policy.MaxPPM && float64(ppm+1)/policy.MaxPPM <= x {
		ppm++
	}
	for ppm > 0 && float64(ppm)/policy.MaxPPM > x {
		ppm--
	}
	return ppm
}

// dim is one dimension of the splits: a bucket key for each gap, and the
// label of a key.
type dim struct {
	name  string
	key   func(*Gap) int64
	label func(int64) string
}

// log2Key returns the octave of n >= 0: 0 for 0, k for 2^(k-1) <= n < 2^k.
func log2Key(n int) int64 { return int64(bits.Len64(uint64(n))) }

// log2Label labels an octave key: "0", "1", "2-3", "4-7", ...
func log2Label(k int64) string {
	switch k {
	case 0:
		return "0"
	case 1:
		return "1"
	}
	lo := int64(1) << (k - 1)
	return strconv.FormatInt(lo, 10) + "-" + strconv.FormatInt(2*lo-1, 10)
}

// Dims lists the names of the splits, in order: prior reuse distance d
// ("inf" for a life's first touch, then octaves), idle length g (octaves),
// the life's age at the touch (octaves), the life's touches up to the gap
// (octaves), the window of the touch (tenths of the trace), the address
// space and the memory region.
var Dims = []string{"prior", "idle", "age", "touches", "window", "space", "region"}

func newDims(t *trace.Trace, regions *trace.Regions) []dim {
	W := len(t.Windows)
	const parts = 10
	return []dim{
		{"prior", func(g *Gap) int64 {
			if g.Prior == trace.Inf {
				return 1 << 40
			}
			return log2Key(g.Prior)
		}, func(k int64) string {
			if k == 1<<40 {
				return "inf"
			}
			return log2Label(k)
		}},
		{"idle", func(g *Gap) int64 { return log2Key(g.Idle) }, log2Label},
		{"age", func(g *Gap) int64 { return log2Key(g.Age) }, log2Label},
		{"touches", func(g *Gap) int64 { return log2Key(g.Touches) }, log2Label},
		{"window", func(g *Gap) int64 { return int64(g.Start * parts / max(W, 1)) }, func(k int64) string {
			lo := (int(k)*W + parts - 1) / parts
			hi := ((int(k)+1)*W+parts-1)/parts - 1
			if lo == hi {
				return strconv.Itoa(lo)
			}
			return strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
		}},
		{"space", func(g *Gap) int64 { return int64(t.Pages[g.Page].Space) }, func(k int64) string { return strconv.FormatInt(k, 10) }},
		{"region", func(g *Gap) int64 { return int64(regions.Of(g.Page)) }, func(k int64) string { return regions.Label(int(k)) }},
	}
}

// OPPAt returns the OPP setting a run is compared with by default: OPP at
// the run's own statistic st (its realised max_pr, p99_pr, ...), at the
// largest rate in parts per million not above it ([RateAt]), so that both
// spend at most the same promotion budget.
func OPPAt(r *result.Result, st result.Stat) policy.OPP {
	return policy.OPP{PPM: RateAt(r.Stat(st))}
}

// CompareOPP compares s with OPP at s's own statistic st ([OPPAt]): it runs s
// once in the simulator to find the rate, then [Compare].
func CompareOPP(ctx context.Context, t *trace.Trace, s policy.Setting, st result.Stat, o Options) (*Comparison, error) {
	rs, err := sim.RunAll(ctx, t, []policy.Setting{s}, nil)
	if err != nil {
		return nil, err
	}
	return Compare(ctx, t, s, OPPAt(rs[0], st), o)
}
