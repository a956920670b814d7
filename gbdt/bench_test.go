//go:build unix

package gbdt

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"mdk/internal/testutil"
)

// touches returns n rows shaped like L-OPP's features: six prior reuse
// distances (integers, -1 where missing), drawn around a per-row typical
// distance; the label says whether that distance is long, with 10% noise.
func touches(rng *rand.Rand, n int) ([]float64, []bool) {
	x := make([]float64, 0, 6*n)
	y := make([]bool, 0, n)
	means := []float64{1, 2, 4, 10, 30, 100}
	for range n {
		mean := means[rng.IntN(len(means))]
		missing := rng.IntN(8) // how many of the six exist
		for k := range 6 {
			v := -1.0
			if k < missing {
				v = 1 + float64(int(rng.ExpFloat64()*mean))
			}
			x = append(x, v)
		}
		y = append(y, (mean >= 10) != (rng.IntN(10) == 0))
	}
	return x, y
}

// BenchmarkTrain trains on 1M touches, depth 6, 100 rounds. Run it with
// -benchtime=1x: one iteration takes seconds.
func BenchmarkTrain(b *testing.B) {
	x, y := touches(testutil.Rand(1), 1_000_000)
	cfg := DefaultConfig // depth 6, 100 rounds
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if _, err := Train(x, 6, y, cfg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(y))*float64(b.N)/b.Elapsed().Seconds(), "touches/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/model")
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/model")
}

// BenchmarkScore scores touches with a depth-6, 100-tree model.
func BenchmarkScore(b *testing.B) {
	x, y := touches(testutil.Rand(2), 100_000)
	m, err := Train(x, 6, y, DefaultConfig)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := time.Duration(0)
	i, s := 0, 0.0
	for b.Loop() {
		if cpu == 0 {
			cpu = cpuTime()
		}
		s += m.Score(x[i*6 : i*6+6])
		if i++; i == len(y) {
			i = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "touches/s")
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu).Seconds(), "touches/cpu-s")
	if s < 0 {
		b.Fatal("negative score")
	}
}

// cpuTime returns the CPU time (user and system) used by the process so far.
// On a shared machine it measures the work better than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
