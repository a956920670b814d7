package policy

import (
	"math"
	"strings"
	"testing"

	"mdk/gbdt"
	"mdk/internal/testutil"
	"mdk/trace"
)

// stump is a hand-written model: margin -2 when the most recent prior reuse
// distance is <= 5 (or missing), +2 when it is longer.
const stump = `{"format":"mdk-gbdt","version":1,"num_features":6,"base_margin":0,
"config":{"rounds":1,"max_depth":1,"learning_rate":0.3,"lambda":1,"min_child_weight":1,"subsample":1,"max_bins":256,"seed":1},
"cuts":[[5],[],[],[],[],[]],
"trees":[{"feature":[0,-1,-1],"left":[1,0,0],"value":[5,-2,2]}]}`

func stumpModel(t *testing.T) *gbdt.Model {
	t.Helper()
	m, err := gbdt.ReadJSON(strings.NewReader(stump))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLOPP(t *testing.T) {
	m := stumpModel(t)
	p := LOPP{Theta: 0.5, Model: m}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := String(p); got != "lopp:theta=0.5" {
		t.Errorf("String = %q", got)
	}
	if got := (LOPP{Theta: 1.0 / 3}).Params(); got != "theta=0.3333333333333333" {
		t.Errorf("Params = %q", got)
	}
	hi, lo := 1/(1+math.Exp(-2)), 1/(1+math.Exp(2))
	for _, tc := range []struct {
		name       string
		now, touch int
		d          int
		theta      float64
		want       bool
	}{
		{"long prior", 7, 7, 6, 0.5, true},
		{"short prior", 7, 7, 5, 0.5, false},
		{"missing prior", 7, 7, -1, 0.5, false},
		{"not right after the touch", 8, 7, 6, 0.5, false},
		{"theta equal to the score", 7, 7, 6, hi, true},
		{"theta just above the score", 7, 7, 6, math.Nextafter(hi, 1), false},
		{"theta 0 reclaims everything", 7, 7, -1, 0, true},
		{"low score at its own theta", 7, 7, 2, lo, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &PageState{Now: tc.now, LastTouch: tc.touch, Features: Features{int32(tc.d), -1, -1, -1, -1, -1}}
			p := LOPP{Theta: tc.theta, Model: m}
			if got := p.NewDecider(nil).Reclaim(s); got != tc.want {
				t.Errorf("Reclaim = %v, want %v (score %g)", got, tc.want, p.Score(&s.Features))
			}
		})
	}
}

// TestLOPPCritical: the one-pass generator's view (reclaimed iff Theta <=
// CriticalOf) agrees with the simulator's (Reclaim) on a trained model.
func TestLOPPCritical(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 9))
	var x []float64
	var y []bool
	for range 2000 {
		var r [6]float64
		for k := range r {
			r[k] = float64(rng.IntN(30) - 1)
		}
		x = append(x, r[:]...)
		y = append(y, r[0]+r[1] > 25 != (rng.IntN(10) == 0))
	}
	cfg := gbdt.DefaultConfig
	cfg.Rounds = 10
	m, err := gbdt.Train(x, 6, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	reclaimed := 0
	for range 2000 {
		var f Features
		for k := range f {
			f[k] = int32(rng.IntN(35) - 1)
		}
		theta := rng.Float64()
		p := LOPP{Theta: theta, Model: m}
		s := &PageState{Now: 3, LastTouch: 3, Features: f}
		sim := p.Reclaim(s)
		gen := p.Param() <= p.CriticalOf(&f)
		if sim != gen {
			t.Fatalf("features %v theta %g: Reclaim %v, Theta <= CriticalOf %v", f, theta, sim, gen)
		}
		if sim {
			reclaimed++
		}
	}
	if reclaimed == 0 || reclaimed == 2000 {
		t.Errorf("%d of 2000 reclaimed: the test exercises nothing", reclaimed)
	}
}

func TestLOPPValidate(t *testing.T) {
	m := stumpModel(t)
	two, err := gbdt.Train([]float64{1, 2, 3, 4}, 2, []bool{true, false}, gbdt.DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p    LOPP
		want string
	}{
		{LOPP{Theta: 0.5}, "no model"},
		{LOPP{Theta: 0.5, Model: two}, "takes 2 features"},
		{LOPP{Theta: 1.5, Model: m}, "theta 1.5"},
		{LOPP{Theta: math.NaN(), Model: m}, "theta NaN"},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%v) = %v, want an error saying %q", tc.p.Theta, err, tc.want)
		}
	}
}

func TestLOPPAllocs(t *testing.T) {
	d := LOPP{Theta: 0.5, Model: stumpModel(t)}.NewDecider(nil)
	s := &PageState{Now: 1, LastTouch: 1, Features: Features{9, 2, -1, -1, -1, -1}}
	if n := testing.AllocsPerRun(100, func() { d.Reclaim(s) }); n != 0 {
		t.Errorf("Reclaim allocates %g times per call", n)
	}
}

func TestFeaturesNext(t *testing.T) {
	f := Features{9, 9, 9, 9, 9, 9}.Next(trace.Inf)
	if f != (Features{-1, -1, -1, -1, -1, -1}) {
		t.Fatalf("first touch: %v", f)
	}
	for _, d := range []int{3, 1, 4, 1, 5, 9, 2} {
		f = f.Next(d)
	}
	if want := (Features{2, 9, 5, 1, 4, 1}); f != want {
		t.Errorf("after 3 1 4 1 5 9 2: %v, want %v", f, want)
	}
}

// TestAttachModelNil: no model is an error for lopp settings only.
func TestAttachModelNil(t *testing.T) {
	ss := []Setting{AGE{A: 1}}
	if err := AttachModel(ss, nil); err != nil {
		t.Errorf("age without a model: %v", err)
	}
	ss = append(ss, LOPP{Theta: 0.5})
	if err := AttachModel(ss, nil); err == nil || !strings.Contains(err.Error(), "needs a model") {
		t.Errorf("lopp without a model: %v, want an error saying it needs one", err)
	}
	if err := AttachModel(ss, stumpModel(t)); err != nil || ss[1].(LOPP).Model == nil {
		t.Errorf("lopp with a model: %v, model %v", err, ss[1].(LOPP).Model)
	}
}
