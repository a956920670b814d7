package gbdt

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mdk/internal/testutil"
)

// ring is a second learnable problem: y = x0² + x1² < 0.5 (a disc, which
// axis-aligned trees can only approximate), x2..x5 noise, labels flipped
// with probability noise.
func ring(rng *rand.Rand, n int, noise float64) (x []float64, y []bool) {
	for range n {
		r := [6]float64{rng.Float64()*2 - 1, rng.Float64()*2 - 1, rng.Float64(), rng.Float64(), float64(rng.IntN(3)), rng.NormFloat64()}
		label := r[0]*r[0]+r[1]*r[1] < 0.5
		if rng.Float64() < noise {
			label = !label
		}
		x = append(x, r[:]...)
		y = append(y, label)
	}
	return x, y
}

// TestAgainstXGBoost trains this package and the xgboost command (Debian
// package xgboost) on the same rows with the same settings, and requires
// our held-out accuracy to be within 2 points of XGBoost's.
func TestAgainstXGBoost(t *testing.T) {
	bin := testutil.RequireTool(t, "xgboost")
	seed := testutil.Seed(t, 2026)
	for _, tc := range []struct {
		name  string
		data  func(*rand.Rand, int, float64) ([]float64, []bool)
		noise float64
		cfg   Config
	}{
		{"xor-rule", synth, 0.1, Config{Rounds: 50, MaxDepth: 6, LearningRate: 0.3, Lambda: 1, MinChildWeight: 1, Subsample: 1, MaxBins: 256}},
		{"disc", ring, 0.05, Config{Rounds: 100, MaxDepth: 4, LearningRate: 0.1, Lambda: 2, MinChildWeight: 2, Subsample: 1, MaxBins: 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := testutil.Rand(seed)
			xtr, ytr := tc.data(rng, 20000, tc.noise)
			xte, yte := tc.data(rng, 10000, tc.noise)
			m, err := Train(xtr, 6, ytr, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ours := accuracy(m, xte, yte)
			pred := runXGBoost(t, bin, tc.cfg, xtr, ytr, xte, yte)
			ok := 0
			for i, p := range pred {
				if (p >= 0.5) == yte[i] {
					ok++
				}
			}
			ref := float64(ok) / float64(len(yte))
			t.Logf("held-out accuracy: gbdt %.4f, xgboost %.4f, majority %.4f, Bayes %.2f", ours, ref, majority(yte), 1-tc.noise)
			if ours < ref-0.02 {
				t.Errorf("gbdt accuracy %.4f is more than 2 points below xgboost's %.4f", ours, ref)
			}
			if ref < majority(yte)+0.1 {
				t.Errorf("xgboost accuracy %.4f: the reference did not learn; is the data written right?", ref)
			}
		})
	}
}

// runXGBoost trains the xgboost command on the training rows with cfg's
// settings (tree_method hist) and returns its probabilities for the test rows.
func runXGBoost(t *testing.T, bin string, cfg Config, xtr []float64, ytr []bool, xte []float64, yte []bool) []float64 {
	t.Helper()
	dir := t.TempDir()
	writeCSV(t, filepath.Join(dir, "train.csv"), xtr, ytr)
	writeCSV(t, filepath.Join(dir, "test.csv"), xte, yte)
	conf := fmt.Sprintf(`booster = gbtree
objective = binary:logistic
tree_method = hist
eta = %g
max_depth = %d
lambda = %g
min_child_weight = %g
subsample = %g
max_bin = %d
num_round = %d
nthread = 2
seed = 1
`, cfg.LearningRate, cfg.MaxDepth, cfg.Lambda, cfg.MinChildWeight, cfg.Subsample, cfg.MaxBins, cfg.Rounds)
	if err := os.WriteFile(filepath.Join(dir, "xgb.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		cmd := exec.CommandContext(t.Context(), bin, append([]string{"xgb.conf"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("xgboost %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("data=train.csv?format=csv&label_column=0", "model_out=model.bin")
	run("task=pred", "model_in=model.bin", "test:data=test.csv?format=csv&label_column=0", "name_pred=pred.txt")
	f, err := os.Open(filepath.Join(dir, "pred.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pred []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p, err := strconv.ParseFloat(strings.TrimSpace(sc.Text()), 64)
		if err != nil {
			t.Fatalf("pred.txt line %d: %v", len(pred)+1, err)
		}
		pred = append(pred, p)
	}
	if len(pred) != len(yte) {
		t.Fatalf("xgboost gave %d predictions for %d test rows", len(pred), len(yte))
	}
	return pred
}

func writeCSV(t *testing.T, path string, x []float64, y []bool) {
	t.Helper()
	var b strings.Builder
	nf := len(x) / len(y)
	for i, l := range y {
		if l {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
		for _, v := range x[i*nf : (i+1)*nf] {
			b.WriteByte(',')
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
