package mpc

import (
	"bytes"
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"mdk/internal/memlimit"
	"mdk/policy"
	"mdk/trace"
)

// gcPercent returns the collector's target (-1: off).
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// TestSampledPartitionsGC: a partitioned sample's pass runs with the
// collector off and a memory limit of sampleHeapBytes (the heap's bound)
// until its first collection, after which it runs at the process's target
// with no limit; both are restored when it ends; an exact pass beginning
// meanwhile ends it (GOGC 25, then the process's 100 again, no limit); and
// nothing changes while another pass runs or a limit is set.
func TestSampledPartitionsGC(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: Generate keeps them")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	runtime.GC() // the other tests' garbage: the heap is far below the limit
	tr := smallGen(t, "mix", 7)
	b := encodePartitioned(t, tr, trace.Partitioning{Count: 12, Seed: 1})
	ss := []policy.Setting{policy.AGE{A: 1}, policy.OPP{PPM: 10000}}
	type state struct {
		gogc  int
		limit int64
	}
	now := func() state { return state{gcPercent(), debug.SetMemoryLimit(-1)} }
	run := func(progress func(done, total int)) {
		t.Helper()
		r, err := trace.NewBinaryReader(bytes.NewReader(b), "mix")
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Sample: trace.Sample{PPM: 100000, Seed: 1}, GroupTotals: true, Progress: progress}
		if _, err := Generate(context.Background(), r, ss, opts); err != nil {
			t.Fatal(err)
		}
	}
	off, normal := state{-1, sampleHeapBytes}, state{100, math.MaxInt64}

	// The limit is a trigger, not a bound: the memory checks ignore it.
	var during []state
	before, _ := memlimit.Available()
	var avail []int64
	run(func(done, total int) {
		during = append(during, now())
		n, _ := memlimit.Available()
		avail = append(avail, n)
	})
	if len(during) == 0 {
		t.Fatal("no progress")
	}
	for i, n := range avail {
		if before > 4*sampleHeapBytes && n < 2*sampleHeapBytes {
			t.Fatalf("window %d: %d bytes available, %d before the pass: the trigger counted as a limit", i, n, before)
		}
	}
	for i, s := range during {
		if s != off {
			t.Fatalf("window %d: GOGC %d, limit %d; want off and %d", i, s.gogc, s.limit, int64(sampleHeapBytes))
		}
	}
	if s := now(); s != normal {
		t.Fatalf("after the pass: %+v, want %+v", s, normal)
	}

	// The first collection ends it.
	during = nil
	run(func(done, total int) {
		if done == 2 {
			runtime.GC()
			for deadline := time.Now().Add(5 * time.Second); now() != normal && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		}
		during = append(during, now())
	})
	for i, s := range during {
		if want := map[bool]state{true: off, false: normal}[i < 1]; s != want {
			t.Fatalf("window %d, a collection after window 1: %+v, want %+v", i, s, want)
		}
	}

	// An exact pass ends it.
	during = nil
	run(func(done, total int) {
		if done == 1 {
			r := lowGC()
			during = append(during, now())
			r()
		}
		during = append(during, now())
	})
	if during[0] != (state{passGCPercent, math.MaxInt64}) || during[1] != normal || during[len(during)-1] != normal {
		t.Fatalf("an exact pass during a sampled one: %+v ... %+v, want GOGC %d then %+v", during[0], during[len(during)-1], passGCPercent, normal)
	}

	// Nothing changes while an exact pass runs, or with a limit set.
	for _, c := range []struct {
		name  string
		setup func() func()
		want  state
	}{
		{"an exact pass running", lowGC, state{passGCPercent, math.MaxInt64}},
		{"a limit set", func() func() {
			debug.SetMemoryLimit(1 << 40)
			return func() { debug.SetMemoryLimit(math.MaxInt64) }
		}, state{100, 1 << 40}},
	} {
		end := c.setup()
		during = nil
		run(func(done, total int) { during = append(during, now()) })
		end()
		for _, s := range during {
			if s != c.want {
				t.Fatalf("%s: %+v during the sampled pass, want %+v", c.name, s, c.want)
			}
		}
	}
	if s := now(); s != normal {
		t.Fatalf("at the end: %+v, want %+v", s, normal)
	}
}
