package verify

import (
	"bytes"
	"context"
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

// partitioned returns tr written as a partitioned binary trace.
func partitioned(t *testing.T, tr *trace.Trace, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriter(&buf, tr.Header, trace.Partitioning{Count: n, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trace.Copy(w, tr.NewReader()); err != nil {
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

// TestPartitionedExact: the exact curves of a partitioned trace equal the
// unpartitioned trace's, integer for integer, for every default setting.
func TestPartitionedExact(t *testing.T) {
	for name, tr := range partitionTraces(t) {
		ss := defaultSettings(tr.Header.Window)
		want, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 7, trace.DefaultPartitions} {
			data := partitioned(t, tr, n)
			r, err := trace.NewBinaryReader(bytes.NewReader(data), name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := mpc.Generate(context.Background(), r, ss, mpc.Options{})
			if err != nil {
				t.Fatalf("%s, %d partitions: %v", name, n, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %d partitions: the curves differ from the unpartitioned trace's", name, n)
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
			old := runtime.GOMAXPROCS(procs)
			r, err := trace.NewBinaryReader(bytes.NewReader(data), "p.mdkt")
			if err != nil {
				t.Fatal(err)
			}
			got, err := mpc.Generate(context.Background(), r, set, mpc.Options{})
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("GOMAXPROCS %d, %d settings: the curves differ", procs, len(set))
			}
		}
	}
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
