package mpc

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// TestCensorEqualsSimulator checks Options.Censor against the simulator:
// every setting's run with the savings of the gaps still open at the trace's
// end (page alive at the end, reclaimed in the gap from its last touch)
// taken out, on random traces, for every policy's edge settings (OPP's open
// gaps included: censored, they save nothing either).
func TestCensorEqualsSimulator(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 26))
	dropped := 0
	for n := range testutil.Count(300) {
		tr := testutil.RandomTrace(rng)
		ss := edgeSettings()
		got, err := Generate(context.Background(), tr.NewReader(), ss, Options{Censor: true})
		if err != nil {
			t.Fatal(err)
		}
		open := openAtEnd(tr)
		for i, s := range ss {
			var cens []int // windows at whose end a censored gap was reclaimed
			want := sim.RunObserved(tr, s, func(page uint32, start, at int) {
				if last, ok := open[page]; ok && last == start {
					cens = append(cens, at)
				}
			})
			for _, at := range cens {
				for w := at + 1; w < len(tr.Windows); w++ {
					want.SavedPerWindow[w]--
					want.Saved--
				}
			}
			dropped += len(cens)
			if d := cmp.Diff(want, got[i], cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("%s: trace %d: censored generator differs (-sim +mpc):\n%s", policy.String(s), n, d)
			}
		}
	}
	if dropped == 0 {
		t.Fatal("no censored gap was reclaimed: the test exercises nothing")
	}
}

// openAtEnd returns the last touch of every page alive at the end of tr.
func openAtEnd(tr *trace.Trace) map[uint32]int {
	last := map[uint32]int{}
	for w := range tr.Windows {
		win := &tr.Windows[w]
		for _, id := range win.Accessed {
			last[id] = w
		}
		for _, id := range win.Born {
			if _, ok := last[id]; !ok {
				last[id] = w
			}
		}
		for _, id := range win.Freed {
			delete(last, id)
		}
	}
	return last
}
