package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"time"

	"mdk/fleet/fleettest"
	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/mpc"
	"mdk/policy"
	"mdk/trace"
)

// partitionTraces returns the traces of the partition equality tests: every
// gen model, random traces as the equality tests draw them, and the real
// traces of importer/testdata.
func partitionTraces(t *testing.T) map[string]*trace.Trace {
	out := map[string]*trace.Trace{}
	for _, m := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model = m
		if testing.Short() {
			cfg.Pages = 5000
		}
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		out["gen "+m] = tr
	}
	rng := testutil.Rand(testutil.Seed(t, 25))
	for i := range testutil.Count(100) {
		out["random "+string(rune('a'+i/26))+string(rune('a'+i%26))] = testutil.RandomTrace(rng)
	}
	for _, rt := range realTraces(t) {
		out[rt.name] = rt.tr
	}
	return out
}

// partitioned returns tr written as a partitioned binary trace (version 5,
// trace.DefaultCuts).
func partitioned(t *testing.T, tr *trace.Trace, n int) []byte {
	t.Helper()
	return partitionedCuts(t, tr, trace.Partitioning{Count: n, Seed: 1})
}

// partitionedCuts returns tr written as a partitioned binary trace of the
// partitions.
func partitionedCuts(t *testing.T, tr *trace.Trace, parts trace.Partitioning) []byte {
	t.Helper()
	return partitionedEvery(t, tr, parts, 0)
}

// partitionedEvery returns tr written as a partitioned binary trace of the
// partitions, in segments of every windows (0: as the writer closes them).
func partitionedEvery(t *testing.T, tr *trace.Trace, parts trace.Partitioning, every int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriter(&buf, tr.Header, parts)
	if err != nil {
		t.Fatal(err)
	}
	r := tr.NewReader()
	for i := 0; ; i++ {
		win, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteWindow(win); err != nil {
			t.Fatal(err)
		}
		if every > 0 && i%every == every-1 {
			if err := w.(interface{ Flush() error }).Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func defaultSettings(w time.Duration) []policy.Setting {
	var ss []policy.Setting
	for _, name := range policy.DefaultPolicies {
		ss = append(ss, policy.DefaultGrid(name, w)...)
	}
	return ss
}

// cutLayouts are the partitions of the equality tests for a trace of rate
// r (10^6 for a whole trace): version 5's default cuts for 1, 7, 12 and 100
// partitions, and cut lists of their own: 16 equal partitions (version
// 4's), a skewed ladder (one digit, then each partition ten times the
// last), and random cuts with partitions of one digit.
func cutLayouts(r uint64, rng *rand.Rand) map[string]trace.Partitioning {
	out := map[string]trace.Partitioning{}
	for _, n := range []int{1, 7, trace.DefaultPartitions, 100} {
		out[fmt.Sprintf("%d default", n)] = trace.Partitioning{Count: n, Seed: 1}
	}
	skew := []uint32{0}
	for c := uint64(1); c < r; c *= 10 {
		skew = append(skew, uint32(c))
	}
	skew = append(skew, uint32(r))
	random := []uint32{0, 1, 2}
	for c := uint64(3); c < r; c += 1 + rng.Uint64N(r/4+1) {
		random = append(random, uint32(c))
	}
	random = append(random, uint32(r))
	for name, cuts := range map[string][]uint32{"16 equal": trace.EqualCuts(16, r), "skewed": skew, "random": random} {
		cuts = slices.Compact(cuts)
		out[name] = trace.Partitioning{Count: len(cuts) - 1, Seed: 1, Cuts: cuts}
	}
	return out
}

// rateOf is the rate of tr's pages: 10^6 unless it is a sample.
func rateOf(tr *trace.Trace) uint64 {
	if tr.Header.Sample.All() {
		return trace.SampleAll
	}
	return uint64(tr.Header.Sample.PPM)
}

// TestPartitionedExact: the exact curves of a partitioned trace equal the
// unpartitioned trace's, integer for integer, for every default setting and
// every layout of cutLayouts, read by one reader that the workers share and
// by forked ones (partReaders), on at least 2 workers.
func TestPartitionedExact(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	rng := testutil.Rand(testutil.Seed(t, 55))
	for name, tr := range partitionTraces(t) {
		ss := defaultSettings(tr.Header.Window)
		want, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for lname, parts := range cutLayouts(rateOf(tr), rng) {
			data := partitionedCuts(t, tr, parts)
			for _, pr := range partReaders {
				got, err := mpc.Generate(context.Background(), pr.open(t, data, name), ss, mpc.Options{})
				if err != nil {
					t.Fatalf("%s, partitions %s, %s reader: %v", name, lname, pr.name, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, partitions %s, %s reader: the curves differ from the unpartitioned trace's", name, lname, pr.name)
				}
			}
		}
	}
}

// TestPartitionedSampleExact: a sample of a partitioned trace (the
// partitions below the rate read, the one that straddles it filtered)
// gives the curves and bounds of the same sample of the unpartitioned
// trace, on every layout of cutLayouts, at rates on a cut and between.
func TestPartitionedSampleExact(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 56))
	trs := partitionTraces(t)
	names := slices.Sorted(maps.Keys(trs))
	if testing.Short() {
		names = names[:len(names)/4]
	}
	for i, name := range names {
		tr := trs[name]
		if !tr.Header.Sample.All() {
			continue
		}
		ss := defaultSettings(tr.Header.Window)
		layouts := cutLayouts(rateOf(tr), rng)
		for _, ppm := range []int64{1000, 10000, 100000, 200000, 500000} {
			s := trace.Sample{PPM: ppm, Seed: 1}
			want, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{Sample: s})
			if err != nil {
				t.Fatal(err)
			}
			for lname, parts := range layouts {
				if (i+int(ppm/1000))%3 != 0 && lname != "12 default" {
					continue // a third of the rest
				}
				r, err := trace.NewBinaryReader(bytes.NewReader(partitionedCuts(t, tr, parts)), name)
				if err != nil {
					t.Fatal(err)
				}
				got, err := mpc.Generate(context.Background(), r, ss, mpc.Options{Sample: s})
				if err != nil {
					t.Fatalf("%s, partitions %s, rate %d: %v", name, lname, ppm, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, partitions %s, rate %d ppm: the sampled curves differ from the unpartitioned trace's", name, lname, ppm)
				}
			}
		}
	}
}

// namedTrace is a real trace of importer/testdata, imported.
type namedTrace struct {
	name string
	tr   *trace.Trace
}

// realTraces imports the real traces of importer/testdata as the import
// benchmark does (fleettest.RealTraces).
func realTraces(t *testing.T) []namedTrace {
	rs, err := fleettest.RealTraces()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]namedTrace, len(rs))
	for i, r := range rs {
		out[i] = namedTrace{r.Name, r.Trace}
	}
	return out
}

// TestPartitionedWorkers: the partitioned pass gives the same curves with
// any number of workers, and a gap-by-gap engine (a plug-in policy, which
// reads the trace merged) gives the same as on the unpartitioned trace.
func TestPartitionedWorkers(t *testing.T) {
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages = "mix", 3000
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ss := defaultSettings(tr.Header.Window)
	gapwise, err := policy.Parse("vmin:T=1|3", tr.Header.Window)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range [][]policy.Setting{ss, append(slices.Clone(ss), pluginSettings(gapwise)...)} {
		want, err := mpc.Generate(context.Background(), tr.NewReader(), set, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		data := partitioned(t, tr, 13)
		for _, procs := range []int{1, 2, 5, 13, 20} {
			for _, pr := range partReaders {
				old := runtime.GOMAXPROCS(procs)
				r := pr.open(t, data, "p.mdkt")
				got, err := mpc.Generate(context.Background(), r, set, mpc.Options{})
				runtime.GOMAXPROCS(old)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("GOMAXPROCS %d, %s reader, %d settings: the curves differ", procs, pr.name, len(set))
				}
			}
		}
	}
}

// partReaders are the two ways the partitioned pass reads a trace: one
// reader that its workers share segment by segment (NewBinaryReader, which
// cannot fork), and one reader for each worker (NewReaderAuto on a
// bytes.Reader, which can be read at an offset: trace.PartitionForker).
var partReaders = []struct {
	name string
	open func(t *testing.T, data []byte, name string) trace.Reader
}{
	{"shared", func(t *testing.T, data []byte, name string) trace.Reader {
		t.Helper()
		r, err := trace.NewBinaryReader(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.(trace.PartitionForker); ok {
			if _, err := r.(trace.PartitionForker).ForkPartitions([]int{0}); err == nil {
				t.Fatal("NewBinaryReader's reader forks: the shared path is not tested")
			}
		}
		return r
	}},
	{"forked", func(t *testing.T, data []byte, name string) trace.Reader {
		t.Helper()
		r, err := trace.NewReaderAuto(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r.(trace.PartitionForker); !ok {
			t.Fatal("NewReaderAuto's reader of a bytes.Reader does not fork")
		}
		return r
	}},
}

// plugin is a policy.OneParam that is not a built-in engine's: the
// generator takes its gaps one by one.
type plugin struct{ policy.VMIN }

func (p plugin) Policy() string { return "plugin-vmin" }

func pluginSettings(ss []policy.Setting) []policy.Setting {
	var out []policy.Setting
	for _, s := range ss {
		out = append(out, plugin{s.(policy.VMIN)})
	}
	return out
}

// TestPartitionedStops: the partitioned pass, whose workers run ahead of
// the merge, stops cleanly whatever the number of workers and whether they
// share a reader or have their own: cancelled in the middle of a segment it
// returns the context's error, on a damaged file (any byte past the header
// flipped, or the file cut short) a *trace.CorruptError, the same with a
// shared reader and with forked ones, and it leaves no goroutine behind.
func TestPartitionedStops(t *testing.T) {
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Pages = "mix", 3000
	tr := genTrace(t, cfg)
	data := partitionedEvery(t, tr, trace.Partitioning{Count: 13, Seed: 1}, 5) // segments of 5 windows
	if len(tr.Windows) < 20 {
		t.Fatalf("%d windows, want 20 or more", len(tr.Windows))
	}
	ss := defaultSettings(tr.Header.Window)
	before := runtime.NumGoroutine()
	rng := testutil.Rand(testutil.Seed(t, 25))
	for _, procs := range []int{1, 2, 5} {
		old := runtime.GOMAXPROCS(procs)
		for _, pr := range partReaders {
			ctx, cancel := context.WithCancel(context.Background())
			r := pr.open(t, data, "p.mdkt")
			_, err := mpc.Generate(ctx, r, ss, mpc.Options{Progress: func(w, _ int) {
				if w == 7 {
					cancel()
				}
			}})
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Errorf("GOMAXPROCS %d, %s reader, cancelled after window 6: got %v", procs, pr.name, err)
			}
		}
		for i := range testutil.Count(40) {
			bad := bytes.Clone(data)
			if i%2 == 0 {
				bad[len(data)/4+rng.IntN(len(data)*3/4)] ^= byte(1 + rng.IntN(255))
			} else {
				bad = bad[:len(data)/4+rng.IntN(len(data)*3/4)]
			}
			// Both readers report the damage, and the same: the workers
			// with readers of their own stop at it as the one reader
			// does.
			var msgs []string
			for _, pr := range partReaders {
				r := pr.open(t, bad, "bad.mdkt")
				_, err := mpc.Generate(context.Background(), r, ss, mpc.Options{})
				var ce *trace.CorruptError
				if !errors.As(err, &ce) {
					t.Errorf("GOMAXPROCS %d, %s reader, a byte flipped or the file cut: got %v, want a *trace.CorruptError", procs, pr.name, err)
					continue
				}
				msgs = append(msgs, err.Error())
			}
			if len(msgs) == 2 && msgs[0] != msgs[1] {
				t.Errorf("GOMAXPROCS %d, a byte flipped or the file cut: the shared reader's error\n\t%s\nthe forked readers'\n\t%s", procs, msgs[0], msgs[1])
			}
		}
		runtime.GOMAXPROCS(old)
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the passes, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// genTrace reads gen's trace of cfg.
func genTrace(t *testing.T, cfg gen.Config) *trace.Trace {
	t.Helper()
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
