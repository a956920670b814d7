package gen

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"time"

	"mdk/trace"
)

// Config describes one synthetic trace. Start from [DefaultConfig] and
// change what you need.
type Config struct {
	Model    string        // zipf, scan, phases, churn or mix
	Pages    int           // distinct page numbers the model uses (for mix: in total)
	Windows  int           // number of windows W
	Window   time.Duration // window length
	PageSize int           // bytes per page
	Seed     uint64        // seed of every random draw

	Zipf   ZipfConfig
	Scan   ScanConfig
	Phases PhasesConfig
	Churn  ChurnConfig
	Mix    MixConfig
}

// DefaultConfig is the default workload: the mix model on 100,000 pages for
// 240 windows of 30 s (two hours), about 4.5 million access records.
var DefaultConfig = Config{
	Model:    "mix",
	Pages:    100_000,
	Windows:  240,
	Window:   trace.DefaultWindow,
	PageSize: trace.DefaultPageSize,
	Seed:     1,
	Zipf:     DefaultZipf,
	Scan:     DefaultScan,
	Phases:   DefaultPhases,
	Churn:    DefaultChurn,
	Mix:      DefaultMix,
}

// Models lists the model names.
var Models = []string{"zipf", "scan", "phases", "churn", "mix"}

// maxPages keeps dense IDs within uint32.
const maxPages = 1 << 31

func checkProb(name string, p float64) error {
	if !(p >= 0 && p <= 1) {
		return fmt.Errorf("gen: %s = %v is not a probability in [0, 1]", name, p)
	}
	return nil
}

func checkFraction(name string, p float64) error {
	if !(p > 0 && p <= 1) {
		return fmt.Errorf("gen: %s = %v is not a fraction in (0, 1]", name, p)
	}
	return nil
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	switch {
	case c.Pages < 1 || c.Pages > maxPages:
		return fmt.Errorf("gen: pages = %d out of range 1..%d", c.Pages, maxPages)
	case c.Windows < 1:
		return fmt.Errorf("gen: windows = %d is not positive", c.Windows)
	case c.Window <= 0:
		return fmt.Errorf("gen: window length %v is not positive", c.Window)
	case c.PageSize < 1:
		return fmt.Errorf("gen: page size %d is not positive", c.PageSize)
	}
	var errs []error
	use := map[string]bool{c.Model: true}
	switch c.Model {
	case "zipf", "scan", "phases", "churn":
	case "mix":
		errs = append(errs, c.Mix.validate())
		use = map[string]bool{"zipf": c.Mix.Zipf > 0, "scan": c.Mix.Scan > 0, "phases": c.Mix.Phases > 0, "churn": c.Mix.Churn > 0}
	default:
		return fmt.Errorf("gen: unknown model %q (known: zipf, scan, phases, churn, mix)", c.Model)
	}
	if use["zipf"] {
		errs = append(errs, c.Zipf.validate())
	}
	if use["scan"] {
		errs = append(errs, c.Scan.validate())
	}
	if use["phases"] {
		errs = append(errs, c.Phases.validate())
	}
	if use["churn"] {
		errs = append(errs, c.Churn.validate())
	}
	return errors.Join(errs...)
}

// MemoryNeed estimates the memory, in bytes, that generating c takes at
// its peak: per page, what gen measured at 4 million pages (peak resident
// set size, GC headroom included) for each model, rounded up; a mix weighs
// its models by their shares.
func (c *Config) MemoryNeed() int64 {
	perPage := map[string]float64{"zipf": 50, "scan": 64, "phases": 64, "churn": 88}
	b := perPage[c.Model]
	if c.Model == "mix" {
		if sum := c.Mix.Zipf + c.Mix.Scan + c.Mix.Phases + c.Mix.Churn; sum > 0 {
			b = (50*c.Mix.Zipf + 64*c.Mix.Scan + 64*c.Mix.Phases + 88*c.Mix.Churn) / sum
		}
	}
	return int64(b * float64(c.Pages))
}

// Header returns the header of the trace c generates.
func (c *Config) Header() trace.Header {
	return trace.Header{
		PageSize: c.PageSize,
		Window:   c.Window,
		Windows:  c.Windows,
		Source:   fmt.Sprintf("mdk gen --model %s --pages %d --windows %d --seed %d", c.Model, c.Pages, c.Windows, c.Seed),
	}
}

// Generate writes the trace of cfg to w window by window, then closes w.
func Generate(cfg Config, w trace.Writer) error {
	r := NewReader(cfg)
	if g := r.(*reader); g.err != nil {
		return g.err
	}
	_, err := trace.Copy(w, r)
	return err
}

// NewReader returns a reader that generates the trace of cfg as it is read.
// An invalid cfg makes every Read return the error of [Config.Validate].
// Memory is proportional to cfg.Pages.
func NewReader(cfg Config) trace.Reader {
	g := &reader{cfg: cfg, hdr: cfg.Header()}
	if err := cfg.Validate(); err != nil {
		g.err = err
		return g
	}
	g.build()
	return g
}

// region is one model over pages 0..n-1 of one address space; its pages
// are the slots off..off+n-1 of the reader.
type region struct {
	space uint32
	off   int
	n     int
	m     model
	rng   *rand.Rand
}

// model produces the events of one window of a region.
type model interface {
	step(w int, rng *rand.Rand, s sink)
}

// sink receives a model's events as bits in the reader's slot bitmaps.
type sink struct {
	a, b, f bitset
	off     int
}

func (s sink) access(i int) { s.a.set(s.off + i) }
func (s sink) birth(i int)  { s.b.set(s.off + i) }
func (s sink) free(i int)   { s.f.set(s.off + i) }

type bitset []uint64

func (b bitset) set(i int)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(i&63)) != 0 }

// reader generates windows. Per slot (page) it holds the dense ID and the
// (space, page) once announced; per window it fills three slot bitmaps and
// turns them into ID lists through idBits, a bitmap over dense IDs, so each
// list comes out sorted in O(pages/64 + records).
type reader struct {
	cfg     Config
	hdr     trace.Header
	err     error
	regions []region
	slots   int
	id      []uint32 // slot -> dense ID, unseen before announced
	pages   []trace.Page
	ev      [3]bitset // slot bitmaps of a, b, f
	idBits  bitset
	win     trace.Window
	next    int
}

const unseen = ^uint32(0)

func (g *reader) build() {
	c := &g.cfg
	type part struct {
		name  string
		share float64
	}
	parts := []part{{c.Model, 1}}
	if c.Model == "mix" {
		parts = []part{{"zipf", c.Mix.Zipf}, {"scan", c.Mix.Scan}, {"phases", c.Mix.Phases}, {"churn", c.Mix.Churn}}
	}
	sum := 0.0
	for _, p := range parts {
		sum += p.share
	}
	off := 0
	for i, p := range parts {
		n := int(float64(c.Pages) * p.share / sum)
		if i == len(parts)-1 {
			n = c.Pages - off
		}
		if p.share == 0 || n == 0 {
			continue
		}
		rng := rand.New(rand.NewPCG(c.Seed, 0x6d646b2d67656e00+uint64(i)))
		var m model
		switch p.name {
		case "zipf":
			m = newZipf(c.Zipf, n, rng)
		case "scan":
			m = newScan(c.Scan, n)
		case "phases":
			m = newPhases(c.Phases, n)
		case "churn":
			m = newChurn(c.Churn, n)
		}
		g.regions = append(g.regions, region{space: uint32(i), off: off, n: n, m: m, rng: rng})
		off += n
	}
	g.slots = off
	g.pages = make([]trace.Page, 0, off) // every slot is at most one page: no regrowth
	g.id = make([]uint32, off)
	for i := range g.id {
		g.id[i] = unseen
	}
	words := (off + 63) / 64
	for k := range g.ev {
		g.ev[k] = make(bitset, words)
	}
	g.idBits = make(bitset, words)
}

func (g *reader) Header() trace.Header { return g.hdr }
func (g *reader) Pages() []trace.Page  { return g.pages }

// page returns the (space, page) of a slot.
func (g *reader) page(slot int) trace.Page {
	for i := len(g.regions) - 1; i >= 0; i-- {
		if r := &g.regions[i]; slot >= r.off {
			return trace.Page{Space: r.space, Page: uint64(slot - r.off)}
		}
	}
	panic("gen: slot outside every region")
}

// Read generates the next window. The steps:
//  1. clear the slot bitmaps and let every region's model fill them;
//  2. announce unseen slots in slot order, i.e. (space, page) order;
//  3. turn each slot bitmap into a sorted list of dense IDs.
func (g *reader) Read() (*trace.Window, error) {
	if g.err != nil {
		return nil, g.err
	}
	if g.next >= g.cfg.Windows {
		return nil, io.EOF
	}
	// Step 1.
	for k := range g.ev {
		clear(g.ev[k])
	}
	for i := range g.regions {
		r := &g.regions[i]
		r.m.step(g.next, r.rng, sink{a: g.ev[0], b: g.ev[1], f: g.ev[2], off: r.off})
	}
	// Step 2.
	win := &g.win
	win.Reset(g.next)
	for wi := range g.ev[0] {
		u := g.ev[0][wi] | g.ev[1][wi] | g.ev[2][wi]
		for u != 0 {
			slot := wi<<6 | bits.TrailingZeros64(u)
			u &= u - 1
			if g.id[slot] == unseen {
				g.id[slot] = uint32(len(g.pages))
				p := g.page(slot)
				g.pages = append(g.pages, p)
				win.New = append(win.New, p)
			}
		}
	}
	// Step 3.
	win.Accessed = g.list(g.ev[0], win.Accessed)
	win.Born = g.list(g.ev[1], win.Born)
	win.Freed = g.list(g.ev[2], win.Freed)
	g.next++
	return win, nil
}

func (g *reader) list(ev bitset, dst []uint32) []uint32 {
	n := 0
	for wi, u := range ev {
		for u != 0 {
			g.idBits.set(int(g.id[wi<<6|bits.TrailingZeros64(u)]))
			u &= u - 1
			n++
		}
	}
	if n == 0 {
		return dst
	}
	words := (len(g.pages) + 63) / 64
	for wi := range g.idBits[:words] {
		u := g.idBits[wi]
		if u == 0 {
			continue
		}
		g.idBits[wi] = 0
		for u != 0 {
			dst = append(dst, uint32(wi<<6|bits.TrailingZeros64(u)))
			u &= u - 1
		}
	}
	return dst
}
