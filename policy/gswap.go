package policy

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"mdk/trace"
)

// gswap's defaults (docs/policies.md, "gswap"). The budget and the minimum
// threshold are the far-memory paper's published values; K, S and the
// history are mdk's choices (the paper tunes K and S per fleet).
const (
	GswapBudgetPPM = 2000 // 0.2% of the working set per minute
	GswapMin       = 2 * time.Minute
	GswapK         = 98
	GswapS         = 5 * time.Minute
	GswapHistory   = time.Hour
)

// Gswap is the far-memory paper's cold-age threshold controller ("g-swap",
// Lagar-Cavilla et al., ASPLOS'19, section 4), a [Controller]: at the end of
// every window it finds the window's best threshold, the smallest of its
// thresholds whose promotions would have kept within the budget (BudgetPPM
// of the working set per minute, scaled to the window's length), and puts
// in force age with the K-th percentile of the best thresholds of the last
// History windows; nothing is reclaimed before the job is S windows old.
// The rule, ties and units included, is in docs/policies.md ("gswap").
type Gswap struct {
	BudgetPPM int64 // the budget: promotions per minute, in ppm of the working set
	Min       int   // the minimum cold-age threshold, windows (>= 1): also the working set's horizon
	K         int   // the percentile of the best thresholds, 1..100
	S         int   // the start-up delay, windows
	History   int   // windows of best thresholds the percentile looks at (>= 1)
	// Window is the trace's window length: the budget's scale.
	Window time.Duration
	// Thresholds are the candidate thresholds in ascending order, the
	// last one trace.Inf: the count ladder's values of at least Min.
	Thresholds []int
}

// NewGswap returns gswap for windows of length window with the given
// parameters (windows), its thresholds the count ladder's values of at
// least min, then inf.
func NewGswap(budgetPPM int64, min, k, s, history int, window time.Duration) *Gswap {
	g := &Gswap{BudgetPPM: budgetPPM, Min: min, K: k, S: s, History: history, Window: window}
	for _, v := range countLadder(window) {
		if v >= min {
			g.Thresholds = append(g.Thresholds, v)
		}
	}
	g.Thresholds = append(g.Thresholds, Inf)
	return g
}

func parseGswap(kvs []KeyValue, o ControllerOptions) (Controller, error) {
	const keys = "budget, min, K, S, history"
	w := o.Window
	budget, min, k, s, hist := int64(GswapBudgetPPM), windowsUp(GswapMin, w), GswapK, windowsUp(GswapS, w), windowsUp(GswapHistory, w)
	for _, kv := range kvs {
		var err error
		switch kv.Key {
		case "budget":
			v, _ := strings.CutSuffix(kv.Value, "/min")
			if budget, err = ParseRate(v); err != nil {
				return nil, keyError("gswap", kv, "%s (a share of the working set per minute, as 0.2%%/min)", err)
			}
		case "min":
			if min, err = controllerCount("gswap", kv, false, w); err == nil && min < 1 {
				err = keyError("gswap", kv, "min must be at least one window")
			}
		case "S":
			s, err = controllerCount("gswap", kv, false, w)
		case "history":
			if hist, err = controllerCount("gswap", kv, false, w); err == nil && hist < 1 {
				err = keyError("gswap", kv, "history must be at least one window")
			}
		case "K":
			n, perr := strconv.Atoi(kv.Value)
			if perr != nil || n < 1 || n > 100 {
				err = keyError("gswap", kv, "K must be a percentile from 1 to 100, got %q", kv.Value)
			}
			k = n
		default:
			err = unknownKey("gswap", kv, keys)
		}
		if err != nil {
			return nil, err
		}
	}
	return NewGswap(budget, min, k, s, hist, w), nil
}

func (g *Gswap) Policy() string { return "gswap" }

// Params prints every parameter: "budget=0.2%/min,min=4,K=98,S=10,history=120".
func (g *Gswap) Params() string {
	return fmt.Sprintf("budget=%s/min,min=%d,K=%d,S=%d,history=%d", FormatRate(g.BudgetPPM), g.Min, g.K, g.S, g.History)
}

// NewRun starts a run.
func (g *Gswap) NewRun(trace.Header) ControlRun {
	return &GswapRun{g: g, cur: Nothing{}}
}

// GswapRun is one run of [Gswap].
type GswapRun struct {
	g    *Gswap
	cur  Online
	life []gswapLife
	// lastCount[j] counts the alive pages last touched in window j.
	lastCount []int64
	best      []int // every window's best threshold, in order
	// Windows records, per window, its working set, best threshold and the
	// threshold put in force (what docs/policies.md calls WSS_k, best_k, T_k).
	Windows []GswapWindow
}

// GswapWindow is what one window's end came to in a gswap run.
type GswapWindow struct {
	WSS       int64 // pages touched in the last Min windows, alive
	Best      int   // the window's best threshold
	Threshold int   // the threshold in force from this scan point (Inf: none reclaimed), -1 before the start-up delay
}

type gswapLife struct {
	alive bool
	last  int
}

// Start returns [Nothing].
func (r *GswapRun) Start() Online { return Nothing{} }

// EndWindow reads window w's touches, computes its working set and best
// threshold, and returns age at the percentile of the best thresholds.
func (r *GswapRun) EndWindow(w *trace.Window, o Outcome) (Online, error) {
	g, k := r.g, w.Index
	if n := idsNeeded(w); len(r.life) < n {
		r.life = append(r.life, make([]gswapLife, n-len(r.life))...)
	}
	r.lastCount = append(r.lastCount, 0)
	// The promotion histogram: each access of an alive page, by its gap's
	// idle length; a threshold T would have promoted the ones with g >= T.
	var idle []int
	acc := make(map[uint32]bool, len(w.Accessed))
	for _, id := range w.Accessed {
		acc[id] = true
		l := &r.life[id]
		if l.alive {
			idle = append(idle, k-l.last-1)
			r.lastCount[l.last]--
		}
		l.alive, l.last = true, k
		r.lastCount[k]++
	}
	for _, id := range w.Born {
		if l := &r.life[id]; !acc[id] && !l.alive {
			l.alive, l.last = true, k
			r.lastCount[k]++
		}
	}
	var wss int64
	for j := max(0, k-g.Min+1); j <= k; j++ {
		wss += r.lastCount[j]
	}
	slices.Sort(idle)
	best := Inf
	for _, t := range g.Thresholds {
		if t == Inf {
			break
		}
		i, _ := slices.BinarySearch(idle, t) // the first idle length >= t
		if withinBudget(int64(len(idle)-i), g.BudgetPPM, wss, g.Window) {
			best = t
			break
		}
	}
	r.best = append(r.best, best)
	for _, id := range w.Freed {
		if l := &r.life[id]; l.alive {
			l.alive = false
			r.lastCount[l.last]--
		}
	}
	rec := GswapWindow{WSS: wss, Best: best, Threshold: -1}
	if k+1 >= g.S {
		h := slices.Clone(r.best[max(0, len(r.best)-g.History):])
		slices.Sort(h)
		t := h[Rank(g.K, len(h))]
		rec.Threshold = t
		r.cur = AGE{A: t}
	}
	r.Windows = append(r.Windows, rec)
	return r.cur, nil
}

// Rank is the index of the nearest-rank K-th percentile of n sorted
// values: ceil(K x n / 100) - 1, at least 0.
func Rank(k, n int) int {
	return max(0, (k*n+99)/100-1)
}

// withinBudget reports whether n promotions in one window of length window
// are within budgetPPM of wss pages per minute:
// n x 1 min x 10^6 <= budgetPPM x wss x window, in exact integers.
func withinBudget(n, budgetPPM, wss int64, window time.Duration) bool {
	lh, ll := bits.Mul64(uint64(n), uint64(time.Minute)*1_000_000)
	hi, a := bits.Mul64(uint64(budgetPPM), uint64(wss))
	if hi != 0 {
		return true // more than 2^64 ppm-pages: any window's promotions fit
	}
	rh, rl := bits.Mul64(a, uint64(window))
	return lh < rh || lh == rh && ll <= rl
}

// idsNeeded returns the number of dense page IDs window w's lists may name.
func idsNeeded(w *trace.Window) int {
	n := 0
	for _, l := range [][]uint32{w.Accessed, w.Born, w.Freed} {
		for _, id := range l {
			n = max(n, int(id)+1)
		}
	}
	return n
}

var _ Controller = (*Gswap)(nil)
