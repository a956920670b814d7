package mpc

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/gbdt"
	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/lopp"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// smallGen returns a small trace of each gen model.
func smallGen(t *testing.T, model string, seed uint64) *trace.Trace {
	t.Helper()
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, 600, 40, seed
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatalf("gen %s: %v", model, err)
	}
	return tr
}

// trainModel trains a small L-OPP model on the first half of tr.
func trainModel(t *testing.T, tr *trace.Trace) *gbdt.Model {
	t.Helper()
	d, err := lopp.Dataset(tr.NewReader(), 20000, lopp.Span{From: 0, To: len(tr.Windows) / 2})
	if err != nil {
		t.Fatal(err)
	}
	cfg := gbdt.DefaultConfig
	cfg.Rounds, cfg.MaxDepth = 8, 4
	m, err := gbdt.Train(d.X, lopp.NumFeatures, d.Y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func loppSettings(m *gbdt.Model) []policy.Setting {
	var ss []policy.Setting
	for _, th := range []float64{0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1} {
		ss = append(ss, policy.LOPP{Theta: th, Model: m})
	}
	return ss
}

// TestGeneratorEqualsSimulatorGen checks every policy, L-OPP included (with
// a fixed model), on every gen model.
func TestGeneratorEqualsSimulatorGen(t *testing.T) {
	m := trainModel(t, smallGen(t, "mix", 99))
	for _, model := range gen.Models {
		for seed := uint64(1); seed <= 3; seed++ {
			tr := smallGen(t, model, seed)
			ss := append(edgeSettings(), policy.DefaultGrid("pace", tr.Header.Window)...)
			// Without L-OPP every gap is counted by histogram
			// (trace.HistWalker); with it, gaps go one by one
			// (trace.Walker).
			checkEqual(t, fmt.Sprintf("gen %s seed %d", model, seed), tr, ss)
			checkEqual(t, fmt.Sprintf("gen %s seed %d with lopp", model, seed), tr, append(ss, loppSettings(m)...))
		}
	}
}

// TestLOPPEqualsSimulatorRandom checks L-OPP on random traces.
func TestLOPPEqualsSimulatorRandom(t *testing.T) {
	m := trainModel(t, smallGen(t, "mix", 98))
	ss := loppSettings(m)
	rng := testutil.Rand(testutil.Seed(t, 8))
	for n := 0; n < testutil.Count(500); n++ {
		checkEqual(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
}

// TestGeneratorEqualsSimulatorBinary reads a gen trace whose windows span
// several of the histogram walk's chunks from the binary format, so that
// every goroutine walks part of each window while the next is decoded.
func TestGeneratorEqualsSimulatorBinary(t *testing.T) {
	cfg := gen.DefaultConfig
	cfg.Pages, cfg.Windows = 200000, 20
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	r, err := trace.NewBinaryReader(bytes.NewReader(testutil.EncodeBinary(t, tr)), "gen.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	ss := []policy.Setting{
		policy.AGE{A: 1}, policy.AGE{A: 4}, policy.VMIN{T: 2}, policy.OPP{PPM: 20000},
		policy.PAW{P: 2, Wait: 1}, policy.PACE{P: 3, A: 2}, policy.PACE{P: policy.Inf, A: 5},
	}
	got, err := Generate(context.Background(), r, ss, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Windows[0].Accessed) < 40000 {
		t.Fatalf("window 0 has %d accesses: too few to span three chunks of 16 K IDs", len(tr.Windows[0].Accessed))
	}
	for i, s := range ss {
		want := sim.Run(tr, s)
		if d := cmp.Diff(want, got[i], cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%s: generator on the binary file differs from the simulator (-sim +mpc):\n%s", policy.String(s), d)
		}
	}
}

// TestAxisTables: the axes' lookup tables, filled in one walk, hold the
// counts their binary searches give, for random axes with repeats, values
// past the table, infinity and (float) NaN.
func TestAxisTables(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 3))
	for range testutil.Count(200) {
		var is []int
		var fs []float64
		for range 1 + rng.IntN(60) {
			v := rng.IntN(2 * tableSize)
			if rng.IntN(10) == 0 {
				v = trace.Inf
			}
			is = append(is, v)
			fs = append(fs, float64(v)+[]float64{0, 0.5, -0.5}[rng.IntN(3)])
		}
		switch rng.IntN(10) {
		case 0:
			fs = append(fs, math.NaN())
		case 1:
			fs = append(fs, math.Inf(-1), math.Inf(1))
		}
		ia, fa := newIntAxis(is), newFloatAxis(fs)
		for v := 0; v < tableSize; v++ {
			if int(ia.le[v]) != ia.searchLE(v) || int(ia.lt[v]) != ia.searchLT(v) {
				t.Fatalf("int axis %v at %d: le %d lt %d, want %d %d", ia.vals, v, ia.le[v], ia.lt[v], ia.searchLE(v), ia.searchLT(v))
			}
			if int(fa.le[v]) != fa.searchLE(float64(v-1)) {
				t.Fatalf("float axis %v at %d: le %d, want %d", fa.vals, v-1, fa.le[v], fa.searchLE(float64(v-1)))
			}
		}
	}
}

// TestIntAxisShared: axes of the same values (in any order, with repeats)
// are one shared axis, equal to one built afresh; other values give
// another; the cache stays within its bound; and the callers' slices are
// not the axis's.
func TestIntAxisShared(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 5))
	for i := range testutil.Count(300) {
		var is []int
		for range 1 + rng.IntN(20) {
			is = append(is, []int{rng.IntN(2 * tableSize), trace.Inf, i}[rng.IntN(3)])
		}
		a := newIntAxis(is)
		shuffled := append(slices.Clone(is), is[0])
		rng.Shuffle(len(shuffled), func(x, y int) { shuffled[x], shuffled[y] = shuffled[y], shuffled[x] })
		if b := newIntAxis(shuffled); b != a {
			t.Fatalf("values %v and %v: two axes", is, shuffled)
		}
		vals := slices.Compact(slices.Sorted(slices.Values(is)))
		fresh := buildIntAxis(vals)
		if !slices.Equal(a.vals, fresh.vals) || !slices.Equal(a.le, fresh.le) || !slices.Equal(a.lt, fresh.lt) || a.ltInf != fresh.ltInf {
			t.Fatalf("values %v: the shared axis differs from a fresh one", is)
		}
		is[0] = -1 // the caller's slice is its own
		if a.vals[0] == -1 && !slices.Contains(vals, -1) {
			t.Fatal("the axis shares its caller's slice")
		}
		if c := newIntAxis(append(vals, 3*tableSize+i)); c == a || slices.Equal(c.vals, a.vals) {
			t.Fatalf("values %v plus one: the same axis", vals)
		}
		axisCache.Lock()
		n := len(axisCache.m)
		axisCache.Unlock()
		if n > axesCached {
			t.Fatalf("%d axes cached, at most %d", n, axesCached)
		}
	}
}

// TestTableReserveBudget: a table reserves its rows up front only within
// the budget (so a header that claims too many windows cannot make a pass
// take more than the budget), and grows as it is filled either way.
func TestTableReserveBudget(t *testing.T) {
	budget := int64(10 * 4 * 8) // 10 rows of 4 cells
	a, b := newTable(4), newTable(4)
	a.reserve(8, &budget)
	if cap(a.data) < 32 || budget != 10*4*8-8*4*8 {
		t.Fatalf("8 rows within the budget: cap %d, budget left %d", cap(a.data), budget)
	}
	b.reserve(1_000_000, &budget)
	if cap(b.data) != 0 || budget != 2*4*8 {
		t.Fatalf("a million rows past the budget: cap %d, budget left %d", cap(b.data), budget)
	}
	b.grow(3)
	if len(b.data) != 12 || b.row(2)[3] != 0 {
		t.Fatalf("a table without a reservation does not grow: len %d", len(b.data))
	}
}
