package mpc

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

func gogc(t *testing.T) int64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("metric %s unsupported", s[0].Name)
	}
	return int64(s[0].Value.Uint64())
}

// TestGenerateLowersGC checks that a pass runs at passGCPercent and restores
// the collector's target after, also when passes overlap, that it never
// raises a lower target, and that a sampled pass keeps the process's.
func TestGenerateLowersGC(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: Generate keeps it")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	tr := testutil.RandomTrace(testutil.Rand(3))
	var during []int64
	opts := Options{Progress: func(done, total int) { during = append(during, gogc(t)) }}
	if _, err := Generate(context.Background(), tr.NewReader(), []policy.Setting{policy.AGE{A: 1}}, opts); err != nil {
		t.Fatal(err)
	}
	if len(during) == 0 {
		t.Fatal("no progress reported")
	}
	for _, g := range during {
		if g != passGCPercent {
			t.Fatalf("GOGC %d during the pass, want %d", g, passGCPercent)
		}
	}
	if g := gogc(t); g != 100 {
		t.Fatalf("GOGC %d after the pass, want 100 again", g)
	}
	// A sampled pass keeps the process's target.
	during = nil
	opts.Sample = trace.Sample{PPM: 500000, Seed: 1}
	if _, err := Generate(context.Background(), tr.NewReader(), []policy.Setting{policy.AGE{A: 1}}, opts); err != nil {
		t.Fatal(err)
	}
	if len(during) == 0 {
		t.Fatal("no progress reported by the sampled pass")
	}
	for _, g := range during {
		if g != 100 {
			t.Fatalf("GOGC %d during a sampled pass, want the process's 100", g)
		}
	}

	r1 := lowGC()
	r2 := lowGC()
	r1()
	if g := gogc(t); g != passGCPercent {
		t.Fatalf("GOGC %d while a second pass runs, want %d", g, passGCPercent)
	}
	r2()
	if g := gogc(t); g != 100 {
		t.Fatalf("GOGC %d after both passes, want 100", g)
	}

	debug.SetGCPercent(10)
	r := lowGC()
	if g := gogc(t); g != 10 {
		t.Fatalf("GOGC %d during a pass that began at 10, want 10", g)
	}
	r()
	if g := gogc(t); g != 10 {
		t.Fatalf("GOGC %d after a pass that began at 10, want 10", g)
	}
}
