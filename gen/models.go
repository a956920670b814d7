package gen

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// threshold turns a probability into a bound for rng.Uint64(): an event of
// probability p happens when a draw is below it; 1 means always.
func threshold(p float64) uint64 {
	if p <= 0 {
		return 0
	}
	x := math.Ldexp(p, 64)
	if p >= 1 || x >= math.Ldexp(1, 64) {
		return math.MaxUint64
	}
	return uint64(x)
}

func hit(rng *rand.Rand, thr uint64) bool {
	return thr == math.MaxUint64 || thr != 0 && rng.Uint64() < thr
}

// ZipfConfig parameterizes the zipf model: pages ranked by popularity
// (rank 1 the most popular), ranks shuffled over page numbers.
type ZipfConfig struct {
	HotFraction float64 // fraction of the pages in the hot set, ranks 1..r0
	HotProb     float64 // per-window access probability of a hot page
	Exponent    float64 // rank r > r0 is accessed with HotProb*(r0/r)^Exponent per window
	ColdProb    float64 // floor of the per-window access probability
}

// DefaultZipf is the default zipf model.
var DefaultZipf = ZipfConfig{HotFraction: 0.05, HotProb: 0.9, Exponent: 1, ColdProb: 0.002}

func (c ZipfConfig) validate() error {
	return errors.Join(checkFraction("zipf.HotFraction", c.HotFraction), checkProb("zipf.HotProb", c.HotProb),
		checkProb("zipf.ColdProb", c.ColdProb), nonNegative("zipf.Exponent", c.Exponent))
}

func nonNegative(name string, x float64) error {
	if !(x >= 0) || math.IsInf(x, 1) {
		return fmt.Errorf("gen: %s = %v is not a finite non-negative number", name, x)
	}
	return nil
}

type zipf struct{ thr []uint64 } // per page number

func newZipf(c ZipfConfig, n int, rng *rand.Rand) *zipf {
	z := &zipf{thr: make([]uint64, n)}
	r0 := max(1, c.HotFraction*float64(n))
	perm := rng.Perm(n)
	for rank, page := range perm {
		p := c.HotProb
		if r := float64(rank + 1); r > r0 {
			p = c.HotProb * math.Pow(r0/r, c.Exponent)
		}
		z.thr[page] = threshold(max(p, c.ColdProb))
	}
	return z
}

func (z *zipf) step(w int, rng *rand.Rand, s sink) {
	for i, t := range z.thr {
		if hit(rng, t) {
			s.access(i)
		}
	}
}

// ScanConfig parameterizes the scan model: pages 0..A-1 form an array swept
// slice by slice (as an iterative graph job does), the others a hot set.
type ScanConfig struct {
	ArrayFraction float64 // fraction A/n of the pages in the swept array
	Period        int     // windows from the start of one sweep to the next
	SweepWindows  int     // windows one sweep takes, 1..Period; window k of a sweep covers slice k
	SweepProb     float64 // probability that a page of the current slice is accessed
	HotProb       float64 // per-window access probability of a hot page
}

// DefaultScan is the default scan model.
var DefaultScan = ScanConfig{ArrayFraction: 0.9, Period: 10, SweepWindows: 4, SweepProb: 0.98, HotProb: 0.9}

func (c ScanConfig) validate() error {
	var err error
	if c.Period < 1 || c.SweepWindows < 1 || c.SweepWindows > c.Period {
		err = fmt.Errorf("gen: scan.Period = %d and scan.SweepWindows = %d: want 1 <= SweepWindows <= Period", c.Period, c.SweepWindows)
	}
	return errors.Join(err, checkFraction("scan.ArrayFraction", c.ArrayFraction),
		checkProb("scan.SweepProb", c.SweepProb), checkProb("scan.HotProb", c.HotProb))
}

type scan struct {
	c        ScanConfig
	n, array int
	sweep    uint64
	hot      uint64
}

func newScan(c ScanConfig, n int) *scan {
	return &scan{c: c, n: n, array: int(c.ArrayFraction * float64(n)), sweep: threshold(c.SweepProb), hot: threshold(c.HotProb)}
}

func (m *scan) step(w int, rng *rand.Rand, s sink) {
	if k := w % m.c.Period; k < m.c.SweepWindows {
		lo, hi := k*m.array/m.c.SweepWindows, (k+1)*m.array/m.c.SweepWindows
		for i := lo; i < hi; i++ {
			if hit(rng, m.sweep) {
				s.access(i)
			}
		}
	}
	for i := m.array; i < m.n; i++ {
		if hit(rng, m.hot) {
			s.access(i)
		}
	}
}

// PhasesConfig parameterizes the phases model: a working set, a contiguous
// range of pages (wrapping around) at a random start, moves every
// PhaseWindows windows.
type PhasesConfig struct {
	PhaseWindows       int     // windows per phase
	WorkingSetFraction float64 // fraction of the pages in the working set
	Prob               float64 // per-window access probability of a working-set page
	BackgroundProb     float64 // per-window access probability of any other page
}

// DefaultPhases is the default phases model.
var DefaultPhases = PhasesConfig{PhaseWindows: 30, WorkingSetFraction: 0.25, Prob: 0.6, BackgroundProb: 0.005}

func (c PhasesConfig) validate() error {
	var err error
	if c.PhaseWindows < 1 {
		err = fmt.Errorf("gen: phases.PhaseWindows = %d is not positive", c.PhaseWindows)
	}
	return errors.Join(err, checkFraction("phases.WorkingSetFraction", c.WorkingSetFraction),
		checkProb("phases.Prob", c.Prob), checkProb("phases.BackgroundProb", c.BackgroundProb))
}

type phases struct {
	c       PhasesConfig
	n, ws   int
	start   int
	in, out uint64
}

func newPhases(c PhasesConfig, n int) *phases {
	return &phases{c: c, n: n, ws: max(1, int(c.WorkingSetFraction*float64(n))), in: threshold(c.Prob), out: threshold(c.BackgroundProb)}
}

func (m *phases) step(w int, rng *rand.Rand, s sink) {
	if w%m.c.PhaseWindows == 0 {
		m.start = rng.IntN(m.n)
	}
	end := m.start + m.ws // the working set is [start, end) modulo n
	for i := range m.n {
		t := m.out
		if i >= m.start && i < end || i < end-m.n {
			t = m.in
		}
		if hit(rng, t) {
			s.access(i)
		}
	}
}

// ChurnConfig parameterizes the churn model: pages are born and freed, and
// freed page numbers are reused, last freed first.
type ChurnConfig struct {
	AliveFraction float64 // fraction of the pages alive (born at window 0, then kept on average)
	Lifetime      float64 // mean life in windows: a live page is freed with probability 1/Lifetime per window
	AccessProb    float64 // per-window access probability of a live page
	BirthAccessed float64 // probability that a page is accessed in its birth window (else it gets a b event)
}

// DefaultChurn is the default churn model.
var DefaultChurn = ChurnConfig{AliveFraction: 0.6, Lifetime: 20, AccessProb: 0.4, BirthAccessed: 0.5}

func (c ChurnConfig) validate() error {
	var err error
	if !(c.Lifetime >= 1) || math.IsInf(c.Lifetime, 1) {
		err = fmt.Errorf("gen: churn.Lifetime = %v is not a finite number >= 1", c.Lifetime)
	}
	return errors.Join(err, checkFraction("churn.AliveFraction", c.AliveFraction),
		checkProb("churn.AccessProb", c.AccessProb), checkProb("churn.BirthAccessed", c.BirthAccessed))
}

type churn struct {
	c                       ChurnConfig
	alive                   bitset
	stack                   []uint32 // free page numbers, top last
	freed                   []uint32 // scratch
	freeP, birthP, accP, bA uint64
}

func newChurn(c ChurnConfig, n int) *churn {
	m := &churn{c: c, alive: make(bitset, (n+63)/64), stack: make([]uint32, n)}
	for i := range n {
		m.stack[i] = uint32(n - 1 - i) // page 0 on top
	}
	a := c.AliveFraction
	birth := 1.0
	if a < 1 {
		// Steady state: alive/Lifetime frees per window = free*birth births.
		birth = min(1, a/(1-a)/c.Lifetime)
	}
	m.freeP, m.birthP, m.accP, m.bA = threshold(1/c.Lifetime), threshold(birth), threshold(c.AccessProb), threshold(c.BirthAccessed)
	return m
}

// step: 1. every page alive since an earlier window is accessed and/or
// freed; 2. births pop page numbers freed in earlier windows; 3. this
// window's frees go on the stack.
func (m *churn) step(w int, rng *rand.Rand, s sink) {
	m.freed = m.freed[:0]
	for wi, u := range m.alive {
		for u != 0 {
			b := u & -u
			u ^= b
			i := wi<<6 | bitsIndex(b)
			if hit(rng, m.accP) {
				s.access(i)
			}
			if hit(rng, m.freeP) {
				s.free(i)
				m.alive[wi] &^= b
				m.freed = append(m.freed, uint32(i))
			}
		}
	}
	births := 0
	if w == 0 {
		births = int(m.c.AliveFraction * float64(len(m.stack)))
	} else {
		for range m.stack {
			if hit(rng, m.birthP) {
				births++
			}
		}
	}
	for range births {
		i := int(m.stack[len(m.stack)-1])
		m.stack = m.stack[:len(m.stack)-1]
		m.alive.set(i)
		if hit(rng, m.bA) {
			s.access(i)
		} else {
			s.birth(i)
		}
	}
	m.stack = append(m.stack, m.freed...)
}

func bitsIndex(b uint64) int { return bits.TrailingZeros64(b) }

// MixConfig gives the shares of the pages of each model in the mix model;
// they need not sum to 1. A zero share leaves the model out.
type MixConfig struct {
	Zipf, Scan, Phases, Churn float64
}

// DefaultMix is the default mix.
var DefaultMix = MixConfig{Zipf: 0.4, Scan: 0.25, Phases: 0.2, Churn: 0.15}

func (c MixConfig) validate() error {
	for _, x := range []float64{c.Zipf, c.Scan, c.Phases, c.Churn} {
		if err := nonNegative("mix share", x); err != nil {
			return err
		}
	}
	if c.Zipf+c.Scan+c.Phases+c.Churn <= 0 {
		return errors.New("gen: mix shares are all 0")
	}
	return nil
}
