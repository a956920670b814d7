package gbdt

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// Config holds the training parameters. Start from [DefaultConfig] and
// change what you need; the zero Config is not valid.
type Config struct {
	Rounds         int     `json:"rounds"`           // boosting rounds (trees), >= 1
	MaxDepth       int     `json:"max_depth"`        // depth of every tree, 1..30
	LearningRate   float64 `json:"learning_rate"`    // eta, in (0, 1]
	Lambda         float64 `json:"lambda"`           // L2 regularisation of leaf values, >= 0
	MinChildWeight float64 `json:"min_child_weight"` // minimum hessian sum of a child, >= 0
	Subsample      float64 `json:"subsample"`        // fraction of rows drawn per round, in (0, 1]
	MaxBins        int     `json:"max_bins"`         // histogram bins per feature, 2..256
	Seed           uint64  `json:"seed"`             // seeds row subsampling
	// Workers is the number of goroutines training may use; 0 means
	// GOMAXPROCS. It never changes the model.
	Workers int `json:"-"`
	// Progress, if set, is called after every round with the rounds done
	// and Rounds. It never changes the model.
	Progress func(done, total int) `json:"-"`
}

// DefaultConfig is the configuration to start from. Its values are XGBoost's
// defaults (eta 0.3, depth 6, lambda 1, min_child_weight 1, 256 bins) with
// 100 rounds.
var DefaultConfig = Config{
	Rounds:         100,
	MaxDepth:       6,
	LearningRate:   0.3,
	Lambda:         1,
	MinChildWeight: 1,
	Subsample:      1,
	MaxBins:        256,
	Seed:           1,
}

// Validate reports the first parameter that is out of range.
func (c Config) Validate() error {
	switch {
	case c.Rounds < 1:
		return fmt.Errorf("gbdt: rounds %d: want >= 1", c.Rounds)
	case c.MaxDepth < 1 || c.MaxDepth > 30:
		return fmt.Errorf("gbdt: max_depth %d: want 1..30", c.MaxDepth)
	case !(c.LearningRate > 0 && c.LearningRate <= 1):
		return fmt.Errorf("gbdt: learning_rate %g: want in (0, 1]", c.LearningRate)
	case !(c.Lambda >= 0) || math.IsInf(c.Lambda, 0):
		return fmt.Errorf("gbdt: lambda %g: want a finite number >= 0", c.Lambda)
	case !(c.MinChildWeight >= 0) || math.IsInf(c.MinChildWeight, 0):
		return fmt.Errorf("gbdt: min_child_weight %g: want a finite number >= 0", c.MinChildWeight)
	case !(c.Subsample > 0 && c.Subsample <= 1):
		return fmt.Errorf("gbdt: subsample %g: want in (0, 1]", c.Subsample)
	case c.MaxBins < 2 || c.MaxBins > 256:
		return fmt.Errorf("gbdt: max_bins %d: want 2..256", c.MaxBins)
	case c.Workers < 0:
		return fmt.Errorf("gbdt: workers %d: want >= 0", c.Workers)
	}
	return nil
}

// ErrNoData is returned by [Train] when there are no rows.
var ErrNoData = errors.New("gbdt: no training rows")

// minGain is the smallest loss reduction worth a split (XGBoost's kRtEps);
// it keeps rounding noise from splitting pure nodes.
const minGain = 1e-6

// Train fits a model to rows of nfeat features each, held row-major in x
// (row i is x[i*nfeat : (i+1)*nfeat]), with labels y. Every feature value
// must be finite.
func Train(x []float64, nfeat int, y []bool, cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if nfeat < 1 {
		return nil, fmt.Errorf("gbdt: %d features: want >= 1", nfeat)
	}
	n := len(y)
	if n == 0 {
		return nil, ErrNoData
	}
	if len(x) != n*nfeat {
		return nil, fmt.Errorf("gbdt: %d feature values for %d rows of %d features: want %d", len(x), n, nfeat, n*nfeat)
	}
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("gbdt: %d rows: at most %d", n, math.MaxInt32)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("gbdt: row %d feature %d is %g: want a finite number", i/nfeat, i%nfeat, v)
		}
	}
	workers := cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	// 1. Quantise: bin edges per feature, then every value to its bin.
	cuts := make([][]float64, nfeat)
	parallel(workers, nfeat, func(f int) { cuts[f] = makeCuts(x, nfeat, f, cfg.MaxBins) })
	bins := make([]uint8, len(x))
	parallel(workers, chunks(len(x)), func(c int) {
		lo, hi := chunkRange(c, len(x))
		for i := lo; i < hi; i++ {
			bins[i] = uint8(sort.SearchFloat64s(cuts[i%nfeat], x[i]))
		}
	})

	// 2. Start every margin at the log-odds of the positive rate.
	pos := 0
	for _, l := range y {
		if l {
			pos++
		}
	}
	p := min(max(float64(pos)/float64(n), 1e-6), 1-1e-6)
	m := &Model{nfeat: nfeat, base: math.Log(p / (1 - p)), cfg: cfg, cuts: cuts}
	m.cfg.Workers, m.cfg.Progress = 0, nil
	margin := make([]float64, n)
	for i := range margin {
		margin[i] = m.base
	}

	b := newBuilder(bins, nfeat, cuts, cfg, workers, n)
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x6a09e667f3bcc909))
	for round := 0; round < cfg.Rounds; round++ {
		// 3. Gradients and hessians of the logistic loss.
		parallel(workers, chunks(n), func(c int) {
			lo, hi := chunkRange(c, n)
			for i := lo; i < hi; i++ {
				pr := sigmoid(margin[i])
				g := pr
				if y[i] {
					g = pr - 1
				}
				b.gh[2*i] = g
				b.gh[2*i+1] = max(pr*(1-pr), 1e-16)
			}
		})
		// 4. Rows of this round.
		b.idx = b.idx[:0]
		for i := 0; i < n; i++ {
			if cfg.Subsample >= 1 || rng.Float64() < cfg.Subsample {
				b.idx = append(b.idx, int32(i))
			}
		}
		// 5. One tree, appended to the model.
		root := int32(len(m.nodes))
		tree := b.grow()
		for _, tn := range tree {
			if tn.leaf {
				m.nodes = append(m.nodes, node{feature: -1, value: tn.value})
			} else {
				m.nodes = append(m.nodes, node{feature: tn.feature, left: root + tn.left, value: cuts[tn.feature][tn.bin]})
			}
		}
		m.roots = append(m.roots, root)
		// 6. Margins of every row, sampled or not, walking the tree on bins.
		parallel(workers, chunks(n), func(c int) {
			lo, hi := chunkRange(c, n)
			for i := lo; i < hi; i++ {
				row := bins[i*nfeat : (i+1)*nfeat]
				k := 0
				for !tree[k].leaf {
					t := &tree[k]
					if int32(row[t.feature]) <= t.bin {
						k = int(t.left)
					} else {
						k = int(t.left) + 1
					}
				}
				margin[i] += tree[k].value
			}
		})
		if cfg.Progress != nil {
			cfg.Progress(round+1, cfg.Rounds)
		}
	}
	return m, nil
}

// makeCuts returns the bin edges of feature f: a value x falls in bin
// SearchFloat64s(cuts, x), the first edge >= x. With at most maxBins
// distinct values every value gets its own bin; else edges are placed at
// quantiles, so that bins hold about n/maxBins rows each.
func makeCuts(x []float64, nfeat, f, maxBins int) []float64 {
	n := len(x) / nfeat
	col := make([]float64, n)
	for i := range col {
		col[i] = x[i*nfeat+f]
	}
	slices.Sort(col)
	distinct := 1
	for i := 1; i < n; i++ {
		if col[i] != col[i-1] {
			distinct++
		}
	}
	var cuts []float64
	if distinct <= maxBins {
		for i := 0; i < n-1; i++ {
			if col[i] != col[i+1] {
				cuts = append(cuts, col[i])
			}
		}
		return cuts
	}
	// Walk distinct values; close a bin at value v once the rows up to v
	// reach the next multiple of n/maxBins. Never close at the largest value.
	step := float64(n) / float64(maxBins)
	next := step
	for i := 0; i < n-1 && len(cuts) < maxBins-1; i++ {
		if col[i] == col[i+1] {
			continue
		}
		if float64(i+1) >= next {
			cuts = append(cuts, col[i])
			for next <= float64(i+1) {
				next += step
			}
		}
	}
	return cuts
}

// tnode is a node of the tree being grown. Children are allocated in pairs:
// the right child of a split is left+1.
type tnode struct {
	leaf       bool
	feature    int32
	bin        int32 // split: bin(x) <= bin goes left
	left       int32
	value      float64 // leaf value, learning rate applied
	g, h       float64 // gradient and hessian sums
	begin, end int     // rows idx[begin:end]
	hist       []float64
}

type builder struct {
	bins    []uint8
	nfeat   int
	nb      []int // bins of each feature
	off     []int // histogram offset of each feature, in bins
	histLen int   // 3 float64 per bin: gradient, hessian, count
	cfg     Config
	workers int

	gh       []float64 // gradient and hessian of row i at 2i, 2i+1
	idx      []int32   // rows of the round, partitioned by node
	scratch  []int32
	free     [][]float64
	partials [][]float64 // one histogram per task of sumHists
	nodes    []tnode
}

func newBuilder(bins []uint8, nfeat int, cuts [][]float64, cfg Config, workers, n int) *builder {
	b := &builder{bins: bins, nfeat: nfeat, cfg: cfg, workers: workers}
	for _, c := range cuts {
		b.off = append(b.off, b.histLen/3)
		b.nb = append(b.nb, len(c)+1)
		b.histLen += 3 * (len(c) + 1)
	}
	b.gh = make([]float64, 2*n)
	b.idx = make([]int32, 0, n)
	b.scratch = make([]int32, n)
	return b
}

func (b *builder) newHist() []float64 {
	if k := len(b.free); k > 0 {
		h := b.free[k-1]
		b.free = b.free[:k-1]
		return h
	}
	return make([]float64, b.histLen)
}

func (b *builder) release(h []float64) {
	if h != nil {
		b.free = append(b.free, h)
	}
}

// grow builds one tree on the rows in b.idx, level by level:
//
//  1. The root's histogram is summed directly.
//  2. At each level, every node of the frontier takes its best split, if any
//     has a gain above minGain and children heavy enough; its rows are
//     partitioned stably into the two children.
//  3. Children that may split again need histograms: the smaller child's is
//     summed directly (in parallel by node and feature), the larger one's is
//     the parent's minus the smaller's.
//  4. Nodes that did not split, and nodes at MaxDepth, become leaves with
//     value -eta*G/(H+lambda).
func (b *builder) grow() []tnode {
	b.nodes = b.nodes[:0]
	root := tnode{begin: 0, end: len(b.idx)}
	for _, r := range b.idx {
		root.g += b.gh[2*r]
		root.h += b.gh[2*r+1]
	}
	b.nodes = append(b.nodes, root)
	frontier := []int{0}
	if b.cfg.MaxDepth > 0 {
		b.nodes[0].hist = b.newHist()
		b.sumHists([]int{0})
	}
	for depth := 0; depth < b.cfg.MaxDepth && len(frontier) > 0; depth++ {
		var next, direct []int
		type sub struct{ node, parent, smaller int }
		var subs []sub
		for _, k := range frontier {
			f, bin, gl, hl, ok := b.bestSplit(&b.nodes[k])
			if !ok {
				continue
			}
			nd := &b.nodes[k]
			nl := b.partition(nd.begin, nd.end, f, bin)
			l := int32(len(b.nodes))
			nd.feature, nd.bin, nd.left = int32(f), int32(bin), l
			left := tnode{g: gl, h: hl, begin: nd.begin, end: nd.begin + nl}
			right := tnode{g: nd.g - gl, h: nd.h - hl, begin: nd.begin + nl, end: nd.end}
			b.nodes = append(b.nodes, left, right)
			if depth+1 < b.cfg.MaxDepth {
				li, ri := int(l), int(l)+1
				small, large := li, ri
				if b.nodes[ri].end-b.nodes[ri].begin < b.nodes[li].end-b.nodes[li].begin {
					small, large = ri, li
				}
				b.nodes[small].hist = b.newHist()
				b.nodes[large].hist = b.newHist()
				direct = append(direct, small)
				subs = append(subs, sub{large, k, small})
				next = append(next, li, ri)
			}
		}
		b.sumHists(direct)
		for _, s := range subs {
			dst, p, sm := b.nodes[s.node].hist, b.nodes[s.parent].hist, b.nodes[s.smaller].hist
			for i := range dst {
				dst[i] = p[i] - sm[i]
			}
		}
		for _, k := range frontier {
			b.release(b.nodes[k].hist)
			b.nodes[k].hist = nil
		}
		frontier = next
	}
	for _, k := range frontier {
		b.release(b.nodes[k].hist)
		b.nodes[k].hist = nil
	}
	eta, lambda := b.cfg.LearningRate, b.cfg.Lambda
	for k := range b.nodes {
		nd := &b.nodes[k]
		if nd.left == 0 {
			nd.leaf = true
			if nd.h+lambda > 0 {
				nd.value = -eta * nd.g / (nd.h + lambda)
			}
		}
	}
	return b.nodes
}

// sumHists fills the histograms of nodes from their rows. The rows of each
// node are cut into blocks of chunkSize; each block is summed into its own
// partial histogram (in parallel), and the partials are added in block
// order. Block boundaries do not depend on the number of workers, so
// neither does any sum.
func (b *builder) sumHists(nodes []int) {
	type task struct{ node, lo, hi int }
	var tasks []task
	for _, k := range nodes {
		nd := &b.nodes[k]
		for lo := nd.begin; lo < nd.end; lo += chunkSize {
			tasks = append(tasks, task{k, lo, min(lo+chunkSize, nd.end)})
		}
	}
	for len(b.partials) < len(tasks) {
		b.partials = append(b.partials, make([]float64, b.histLen))
	}
	bins, gh, nfeat, off := b.bins, b.gh, b.nfeat, b.off
	parallel(b.workers, len(tasks), func(t int) {
		h := b.partials[t]
		clear(h)
		for _, r := range b.idx[tasks[t].lo:tasks[t].hi] {
			g, hh := gh[2*r], gh[2*r+1]
			row := bins[int(r)*nfeat : int(r)*nfeat+nfeat]
			for f, v := range row {
				j := 3 * (off[f] + int(v))
				h[j] += g
				h[j+1] += hh
				h[j+2]++
			}
		}
	})
	for t, tk := range tasks {
		dst := b.nodes[tk.node].hist
		if t == 0 || tasks[t-1].node != tk.node {
			copy(dst, b.partials[t])
			continue
		}
		for i, v := range b.partials[t] {
			dst[i] += v
		}
	}
	for _, k := range nodes {
		if nd := &b.nodes[k]; nd.begin == nd.end {
			clear(nd.hist)
		}
	}
}

// bestSplit returns the split of nd with the largest gain, scanning features
// and bins in increasing order and keeping the first best.
func (b *builder) bestSplit(nd *tnode) (feature, bin int, gLeft, hLeft float64, ok bool) {
	lambda, mcw := b.cfg.Lambda, b.cfg.MinChildWeight
	parent := nd.g * nd.g / (nd.h + lambda)
	total := float64(nd.end - nd.begin)
	best := 2 * minGain // gains below are 2x XGBoost's (no factor 1/2)
	for f := 0; f < b.nfeat; f++ {
		h := nd.hist[3*b.off[f] : 3*(b.off[f]+b.nb[f])]
		var gl, hl, cl float64
		for k := 0; k < b.nb[f]-1; k++ {
			gl += h[3*k]
			hl += h[3*k+1]
			cl += h[3*k+2]
			if cl == 0 {
				continue
			}
			if cl == total {
				break
			}
			gr, hr := nd.g-gl, nd.h-hl
			if hl < mcw || hr < mcw {
				continue
			}
			gain := gl*gl/(hl+lambda) + gr*gr/(hr+lambda) - parent
			if gain > best {
				best, feature, bin, gLeft, hLeft, ok = gain, f, k, gl, hl, true
			}
		}
	}
	return feature, bin, gLeft, hLeft, ok
}

// partition reorders idx[begin:end] stably so that rows with bin <= bin on
// feature f come first, and returns how many they are.
func (b *builder) partition(begin, end, f, bin int) int {
	w, s := begin, 0
	for _, r := range b.idx[begin:end] {
		if int(b.bins[int(r)*b.nfeat+f]) <= bin {
			b.idx[w] = r
			w++
		} else {
			b.scratch[s] = r
			s++
		}
	}
	copy(b.idx[w:end], b.scratch[:s])
	return w - begin
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// chunkSize is the number of rows or values one parallel task handles. It
// does not depend on the number of workers, and tasks write disjoint data.
const chunkSize = 1 << 15

func chunks(n int) int { return (n + chunkSize - 1) / chunkSize }

func chunkRange(c, n int) (lo, hi int) { return c * chunkSize, min((c+1)*chunkSize, n) }

// parallel runs fn(0..tasks-1) on up to workers goroutines. Each task must
// write only its own data, so the result does not depend on scheduling.
func parallel(workers, tasks int, fn func(int)) {
	if workers <= 1 || tasks <= 1 {
		for t := 0; t < tasks; t++ {
			fn(t)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, tasks) {
		wg.Go(func() {
			for {
				t := int(next.Add(1) - 1)
				if t >= tasks {
					return
				}
				fn(t)
			}
		})
	}
	wg.Wait()
}
