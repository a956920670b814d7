package gbdt

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"mdk/internal/testutil"
)

// synth returns n rows of a learnable problem with a known nonlinear rule:
// x0, x1, x3 uniform in [-1, 1], x2 an integer 0..60 (like a reuse
// distance), x4 and x5 pure noise;
//
//	y = (x0*x1 > 0.1) != (x2 > 20 && x3 > -0.2)
//
// and then each label is flipped with probability noise. The Bayes-optimal
// accuracy is therefore 1-noise.
func synth(rng *rand.Rand, n int, noise float64) (x []float64, y []bool) {
	x = make([]float64, 0, n*6)
	y = make([]bool, 0, n)
	for range n {
		r := [6]float64{
			rng.Float64()*2 - 1, rng.Float64()*2 - 1, float64(rng.IntN(61)),
			rng.Float64()*2 - 1, rng.Float64(), float64(rng.IntN(5)),
		}
		label := (r[0]*r[1] > 0.1) != (r[2] > 20 && r[3] > -0.2)
		if rng.Float64() < noise {
			label = !label
		}
		x = append(x, r[:]...)
		y = append(y, label)
	}
	return x, y
}

func accuracy(m *Model, x []float64, y []bool) float64 {
	ok := 0
	for i, l := range y {
		if (m.Score(x[i*6:(i+1)*6]) >= 0.5) == l {
			ok++
		}
	}
	return float64(ok) / float64(len(y))
}

func majority(y []bool) float64 {
	pos := 0
	for _, l := range y {
		if l {
			pos++
		}
	}
	return float64(max(pos, len(y)-pos)) / float64(len(y))
}

// TestLearns fails for a trainer that predicts a constant: the problem's
// majority class is near 50%, and the rule is learnable up to its noise.
func TestLearns(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 7))
	const noise = 0.1
	xtr, ytr := synth(rng, 20000, noise)
	xte, yte := synth(rng, 10000, noise)
	cfg := DefaultConfig
	cfg.Rounds = 60
	m, err := Train(xtr, 6, ytr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	acc, base := accuracy(m, xte, yte), majority(yte)
	t.Logf("held-out accuracy %.4f, majority class %.4f, Bayes rate %.2f", acc, base, 1-noise)
	if acc < base+0.2 {
		t.Errorf("accuracy %.4f is not well above the majority-class rate %.4f", acc, base)
	}
	if acc < 1-noise-0.04 {
		t.Errorf("accuracy %.4f is more than 4 points below the Bayes rate %.2f", acc, 1-noise)
	}
	if acc > 1-noise+0.02 {
		t.Errorf("accuracy %.4f beats the Bayes rate %.2f by more than chance allows: test labels leak?", acc, 1-noise)
	}
	// Scores are probabilities.
	for i := range yte {
		if s := m.Score(xte[i*6 : (i+1)*6]); !(s >= 0 && s <= 1) {
			t.Fatalf("row %d: score %g outside [0, 1]", i, s)
		}
	}
}

// TestStump: with a noiseless threshold rule on integers and depth 1, the
// first tree's split is exactly the rule's threshold, and every held-out row
// is classified right.
func TestStump(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 3))
	var x []float64
	var y []bool
	for range 5000 {
		v := float64(rng.IntN(100))
		x = append(x, v, rng.Float64())
		y = append(y, v > 37)
	}
	cfg := DefaultConfig
	cfg.MaxDepth, cfg.Rounds = 1, 10
	m, err := Train(x, 2, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	root := m.nodes[m.roots[0]]
	if root.feature != 0 || root.value != 37 {
		t.Errorf("first split: feature %d at %g, want feature 0 at 37", root.feature, root.value)
	}
	for v := -5.0; v < 110; v++ {
		if got := m.Score([]float64{v, 0.5}) >= 0.5; got != (v > 37) {
			t.Errorf("x0 = %g: predicted %v, want %v", v, got, v > 37)
		}
	}
}

func TestDeterministic(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 11))
	x, y := synth(rng, 40000, 0.1)
	encode := func(cfg Config) []byte {
		m, err := Train(x, 6, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := m.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cfg := DefaultConfig
	cfg.Rounds, cfg.Subsample, cfg.Seed = 15, 0.7, 5
	cfg.Workers = 1
	a := encode(cfg)
	cfg.Workers = 2
	b := encode(cfg)
	c := encode(cfg)
	if !bytes.Equal(a, b) || !bytes.Equal(b, c) {
		t.Errorf("same data, config and seed gave different model files (workers 1 vs 2 equal: %v; two runs with 2 equal: %v)", bytes.Equal(a, b), bytes.Equal(b, c))
	}
	cfg.Seed = 6
	if d := encode(cfg); bytes.Equal(a, d) {
		t.Errorf("seeds 5 and 6 gave the same model with subsample 0.7: the seed is not used")
	}
}

func TestSaveLoad(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 5))
	x, y := synth(rng, 3000, 0.1)
	cfg := DefaultConfig
	cfg.Rounds = 12
	m, err := Train(x, 6, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/m.json"
	if err := m.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	m2, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		row := x[i*6 : (i+1)*6]
		if a, b := m.Margin(row), m2.Margin(row); a != b {
			t.Fatalf("row %d: margin %g before saving, %g after loading", i, a, b)
		}
	}
	var b1, b2 bytes.Buffer
	m.WriteJSON(&b1)
	m2.WriteJSON(&b2)
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Error("a loaded model writes different JSON than the original")
	}
	if m2.Trees() != 12 || m2.NumFeatures() != 6 || m2.Config().Rounds != 12 {
		t.Errorf("loaded model: %d trees, %d features, rounds %d", m2.Trees(), m2.NumFeatures(), m2.Config().Rounds)
	}
}

const goodModel = `{"format":"mdk-gbdt","version":1,"num_features":2,"base_margin":0,
"config":{"rounds":1,"max_depth":1,"learning_rate":0.3,"lambda":1,"min_child_weight":1,"subsample":1,"max_bins":256,"seed":1},
"cuts":[[1,2],[]],
"trees":[{"feature":[0,-1,-1],"left":[1,0,0],"value":[1.5,-0.2,0.3]}]}`

func TestReadJSON(t *testing.T) {
	m, err := ReadJSON(strings.NewReader(goodModel))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ x0, want float64 }{{1, -0.2}, {1.5, -0.2}, {1.6, 0.3}} {
		if got := m.Margin([]float64{tc.x0, 0}); got != tc.want {
			t.Errorf("margin at x0=%g: %g, want %g", tc.x0, got, tc.want)
		}
	}
	if got, want := m.Score([]float64{2, 0}), 1/(1+math.Exp(-0.3)); got != want {
		t.Errorf("score %g, want sigmoid(0.3) = %g", got, want)
	}
}

func TestReadJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, edit, want string }{
		{"empty", "", "truncated"},
		{"syntax", `{"format":`, "truncated"},
		{"garbage", `{"format" 1}`, "byte 10"},
		{"format", `"format":"xgboost"`, `format "xgboost"`},
		{"version", `"version":2`, "version 2: this mdk reads version 1"},
		{"type", `"version":"1"`, "field version"},
		{"unknown field", `"format":"mdk-gbdt","extra":1`, `unknown field "extra"`},
		{"features", `"num_features":3`, "cuts has 2 features"},
		{"config", `"max_depth":0`, "max_depth 0"},
		{"cuts order", `"cuts":[[2,1],[]]`, "cuts[0] not increasing"},
		{"no trees", `"trees":[]}`, "no trees"},
		{"lengths", `"value":[1.5,-0.2]`, "tree 0: feature, left and value have lengths 3, 3, 2"},
		{"feature range", `"feature":[2,-1,-1]`, "tree 0 node 0: feature 2"},
		{"cycle", `"left":[0,0,0]`, "tree 0 node 0: left child 0"},
		{"child range", `"left":[2,0,0]`, "left child 2"},
		{"trailing", "}{", "data after the model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := edit(goodModel, tc.edit)
			_, err := ReadJSON(strings.NewReader(in))
			if err == nil {
				t.Fatalf("no error for %q", in)
			}
			if !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want it to wrap ErrModel and say %q", err, tc.want)
			}
		})
	}
	if _, err := LoadFile(t.TempDir() + "/missing.json"); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: error %v does not name the file", err)
	}
}

// edit replaces, in the good model, the JSON member named by e's key with e;
// "" gives an empty file, a string starting with { is the whole file, and
// "}{" appends a second object.
func edit(good, e string) string {
	switch {
	case e == "":
		return ""
	case e == "}{":
		return good + "{}"
	case strings.HasPrefix(e, "{"):
		return e
	}
	key := e[:strings.Index(e, ":")+1]
	i := strings.Index(good, key)
	j := i + len(key)
	depth := 0
	for ; j < len(good); j++ {
		c := good[j]
		if depth == 0 && (c == ',' || c == '}') {
			break
		}
		switch c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
	}
	if strings.HasSuffix(e, "}") { // replaces the rest of the object
		return good[:i] + e
	}
	return good[:i] + e + good[j:]
}

func TestTrainErrors(t *testing.T) {
	bad := DefaultConfig
	bad.LearningRate = 0
	for _, tc := range []struct {
		name string
		x    []float64
		nf   int
		y    []bool
		cfg  Config
		want string
	}{
		{"config", []float64{1}, 1, []bool{true}, bad, "learning_rate 0"},
		{"no rows", nil, 1, nil, DefaultConfig, "no training rows"},
		{"features", []float64{1}, 0, []bool{true}, DefaultConfig, "0 features"},
		{"shape", []float64{1, 2, 3}, 2, []bool{true, false}, DefaultConfig, "3 feature values for 2 rows of 2 features"},
		{"nan", []float64{1, 2, math.NaN(), 4}, 2, []bool{true, false}, DefaultConfig, "row 1 feature 0 is NaN"},
		{"inf", []float64{1, math.Inf(1)}, 2, []bool{true}, DefaultConfig, "row 0 feature 1 is +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(tc.x, tc.nf, tc.y, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestOneClass: labels of one class give a model that predicts that class.
func TestOneClass(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	m, err := Train(x, 1, []bool{true, true, true, true}, DefaultConfig)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Score([]float64{2}); s < 0.99 {
		t.Errorf("score %g for an all-positive training set", s)
	}
}

func TestScoreAllocs(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 5))
	x, y := synth(rng, 2000, 0.1)
	cfg := DefaultConfig
	cfg.Rounds = 5
	m, err := Train(x, 6, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	row := x[:6]
	if n := testing.AllocsPerRun(100, func() { m.Score(row) }); n != 0 {
		t.Errorf("Score allocates %g times per call", n)
	}
}

func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(goodModel))
	rng := testutil.Rand(1)
	x, y := synth(rng, 300, 0.1)
	cfg := DefaultConfig
	cfg.Rounds, cfg.MaxDepth = 2, 2
	m, err := Train(x, 6, y, cfg)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	m.WriteJSON(&buf)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadJSON(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrModel) {
				t.Fatalf("error %v does not wrap ErrModel", err)
			}
			return
		}
		row := make([]float64, m.NumFeatures())
		s := m.Score(row)
		var out bytes.Buffer
		if err := m.WriteJSON(&out); err != nil {
			t.Fatal(err)
		}
		m2, err := ReadJSON(&out)
		if err != nil {
			t.Fatalf("re-reading a written model: %v", err)
		}
		if s2 := m2.Score(row); s2 != s && !(math.IsNaN(s) && math.IsNaN(s2)) {
			t.Fatalf("score %g, after a round trip %g", s, s2)
		}
	})
}
