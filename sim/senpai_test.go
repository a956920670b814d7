package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// pySenpai is senpai.py (facebookincubator/senpai) transliterated line by
// line, over a fake cgroup whose memory.high and memory.current the test
// sets: the naive implementation senpai's controller is checked against.
type pySenpai struct {
	// conf
	pressure, maxProbe, maxBackoff, coeffProbe, coeffBackoff float64
	interval                                                 int
	minSize, maxSize                                         int64
	// Cgroup
	high    int64 // memory.high; -1 is "max"
	current int64 // memory.current
	limit   *int64
	// Senpai
	integral   float64
	graceTicks int
}

func (s *pySenpai) readLimit() int64 {
	if s.high < 0 {
		return -1 // (1 << 64) - 1: never equal to a limit set
	}
	return s.high
}

func (s *pySenpai) importLimit(limit *int64) {
	if s.limit == nil || s.readLimit() != *s.limit {
		c := s.current // "Resetting limit to memory.current."
		limit = &c
	}
	l := max(s.minSize, min(s.maxSize, *limit))
	l &^= 4095
	s.limit = &l
}

func (s *pySenpai) setLimit(limit *int64) {
	s.importLimit(limit)
	s.high = *s.limit
}

func (s *pySenpai) scaleLimit(factor float64) {
	x := s.readLimit()
	y := int64(float64(x) + float64(x)*factor)
	s.setLimit(&y)
}

// init is Senpai.__init__ (last_total is the test's: it feeds deltas).
func (s *pySenpai) init() {
	s.high = -1
	s.setLimit(nil)
	s.integral = 0
	s.graceTicks = s.interval
}

func (s *pySenpai) adjust(factor float64) {
	s.scaleLimit(factor)
	s.integral = 0
}

func (s *pySenpai) tick(delta float64) {
	s.integral += delta
	if s.integral > s.pressure {
		e := s.integral / s.pressure
		adj := (e / s.coeffBackoff) * (e / s.coeffBackoff)
		adj = min(adj*s.maxBackoff, s.maxBackoff)
		s.adjust(adj)
		s.graceTicks = s.interval - 1
		return
	}
	if s.graceTicks > 0 {
		s.graceTicks--
		return
	}
	e := s.pressure / max(s.integral, 1)
	adj := (e / s.coeffProbe) * (e / s.coeffProbe)
	adj = min(adj*s.maxProbe, s.maxProbe)
	s.adjust(-adj)
	s.graceTicks = s.interval - 1
}

// naiveSenpai runs senpai over tr the plain way: naiveCapacity's pages, and
// at each scan point the py port started (window 0) or ticked once per
// second of the window with an equal share of the window's stall
// (promotions x swapinNS); memory.high in pages is the capacity. It
// returns the result and the capacity of every window.
func naiveSenpai(tr *trace.Trace, s *policy.Senpai) (*result.Result, []int64) {
	py := &pySenpai{pressure: s.PressureUS, maxProbe: s.MaxProbe, maxBackoff: s.MaxBackoff,
		coeffProbe: s.CoeffProbe, coeffBackoff: s.CoeffBackoff, interval: int(s.Interval / time.Second),
		minSize: s.MinSize, maxSize: s.MaxSize}
	ticks := int(tr.Header.Window / time.Second)
	var limits []int64
	r := naiveCapacity(tr, func(k int, _ int64, r *result.Result) int64 {
		if k == 0 {
			py.current = (r.AlivePerWindow[0] - r.SavedPerWindow[0]) * 4096
			py.init()
		} else {
			stall := float64(r.Promotions[k]) * s.PromotionNS / 1000
			for range ticks {
				py.tick(stall / float64(ticks))
			}
		}
		limits = append(limits, py.high/4096)
		return py.high / 4096
	})
	return r, limits
}

// TestSenpaiEqualsNaive: sim.RunControlled with senpai equals the naive
// run of the transliterated senpai.py, window by window (promotions, saved
// pages, and the capacity in force), on gen traces and random ones, at
// the defaults, with the floor removed, and with knobs that make it probe
// and back off hard; the runs must both probe and back off.
func TestSenpaiEqualsNaive(t *testing.T) {
	type tc struct {
		name string
		tr   *trace.Trace
	}
	var cases []tc
	for _, model := range []string{"mix", "phases", "zipf", "churn"} {
		tr := GenTrace(t, model, 3000, 60, 5)
		cases = append(cases, tc{"gen " + model, tr})
	}
	rng := testutil.Rand(testutil.Seed(t, 29))
	for n := range testutil.Count(200) {
		cases = append(cases, tc{fmt.Sprintf("random %d", n), testutil.RandomTrace(rng)})
	}
	specs := []string{
		"senpai",
		"senpai:min_size=0",
		"senpai:min_size=0,pressure=50us,interval=3s,max_probe=5%,coeff_backoff=2",
		"senpai:min_size=4K,max_size=40K,pressure=1,interval=1,max_probe=0.5,max_backoff=0.5,coeff_probe=1,coeff_backoff=1",
	}
	probes, backoffs := 0, 0
	for _, spec := range specs {
		s, err := policy.ParseSenpai(spec)
		if err != nil {
			t.Fatal(err)
		}
		s.PromotionNS = 10533
		for _, c := range cases {
			got, err := RunControlled(context.Background(), c.tr, s)
			if err != nil {
				t.Fatal(err)
			}
			want, limits := naiveSenpai(c.tr, s)
			want.Policy, want.Params = "senpai", s.Params()
			compare(t, c.name+", "+spec, want, got.Result)
			for k, l := range limits {
				if w := policy.SpecOf(policy.LRU{C: l}); got.Settings[k] != w {
					t.Fatalf("%s, %s: window %d: setting %s, naive %s", c.name, spec, k, got.Settings[k], w)
				}
			}
			run := got.Run.(*policy.SenpaiRun)
			probes += run.Probes
			backoffs += run.Backoffs
		}
	}
	if probes == 0 || backoffs == 0 {
		t.Errorf("%d probes, %d backoffs: the test exercises too little", probes, backoffs)
	}
}
