package policy

import (
	"strings"
	"testing"
	"time"

	"mdk/trace"
)

// TestParseControllers checks the controllers' specs: defaults for 30 s
// windows (the published values converted, rounded up), keys, and a
// one-line error naming the offending part for each mistake.
func TestParseControllers(t *testing.T) {
	o := ControllerOptions{Window: 30 * time.Second}
	for spec, want := range map[string]string{
		"gswap": "gswap:budget=0.2%/min,min=4,K=98,S=10,history=120",
		"gswap:budget=1%,min=2m,K=90,S=0,history=20": "gswap:budget=1%/min,min=4,K=90,S=0,history=20",
		" damos ": "damos:min_age=4,quota=128M/1s",
		"damos:min_age=1m,quota=16,goal=pr<=0.5%": "damos:min_age=2,quota=16,goal=pr<=0.5%",
		"damos:quota=inf":                         "damos:min_age=4,quota=inf",
	} {
		c, err := ParseController(spec, o)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := c.Policy() + ":" + c.Params(); got != want {
			t.Errorf("%s: %s, want %s", spec, got, want)
		}
		// A run's run.json names the controller by its full spec: it
		// must parse back to the same controller (mdk agent compare).
		again, err := ParseController(want, o)
		if err != nil || again.Params() != c.Params() {
			t.Errorf("%s does not parse back: %v %v", want, again, err)
		}
	}
	if !IsController("gswap:K=5") || !IsController(" damos") || IsController("age:A=1") || IsController("auto:age") {
		t.Error("IsController")
	}
	for spec, want := range map[string]string{
		"gswap:K=0":          "gswap:K=0: K must be a percentile",
		"gswap:budget=2":     "gswap:budget=2: rate 2 is out of range",
		"gswap:min=0":        "gswap:min=0: min must be at least one window",
		"gswap:min=45s":      "gswap:min=45s: 45s is not a whole number of 30s windows",
		"gswap:history=0":    "gswap:history=0: history must be at least one window",
		"gswap:foo=1":        `gswap:foo=1: unknown key "foo"`,
		"gswap:K=5,K=6":      `gswap:K=6: duplicate key "K"`,
		"gswap:K":            `gswap:K: want KEY=VALUE`,
		"damos:quota=0":      "damos:quota=0: want a number of pages per window of at least 1",
		"damos:quota=1X/1s":  `damos:quota=1X/1s: bad size "1X"`,
		"damos:quota=1M/0s":  `damos:quota=1M/0s: bad duration "0s"`,
		"damos:goal=pr<=0%":  "damos:goal=pr<=0%: a goal of 0 has no score",
		"damos:goal=psi<=1%": "damos:goal=psi<=1%: a psi goal models pressure from the tier's promotion cost: it needs a tier",
		"damos:goal=wss<=1%": "damos:goal=wss<=1%: want goal=pr<=RATE",
		"damos:min_age=inf":  "damos:min_age=inf: min_age cannot be inf",
		"senpai2:x=1":        `senpai2:x=1: unknown controller "senpai2"`,
	} {
		_, err := ParseController(spec, o)
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line starting %q", spec, err, want)
		}
	}
	if _, err := ParseController("damos:goal=psi<=1%", ControllerOptions{Window: time.Second, PromotionNS: 6000}); err != nil {
		t.Errorf("psi goal with a tier: %v", err)
	}
}

// TestDamosQuotaPages checks the quota's conversion to pages per window:
// 128 MiB per second over 30 s windows of 4 KiB pages, and a rate below a
// page per window (no page may go out).
func TestDamosQuotaPages(t *testing.T) {
	for spec, want := range map[string]int64{
		"damos":                128 << 20 / 4096 * 30,
		"damos:quota=7":        7,
		"damos:quota=4095/30s": 0,
		"damos:quota=1G/1h":    (1 << 30) / 120 / 4096,
	} {
		c, err := ParseController(spec, ControllerOptions{Window: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		r := c.NewRun(traceHeader4K())
		s, _ := r.EndWindow(emptyWindow(), Outcome{})
		q, ok := s.(Quota)
		if !ok || q.Pages != want {
			t.Errorf("%s: in force %s, want quota=%d", spec, SpecOf(s), want)
		}
	}
}

func traceHeader4K() trace.Header { return trace.DefaultHeader() }

func emptyWindow() *trace.Window { return &trace.Window{} }
