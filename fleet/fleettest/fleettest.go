// Package fleettest writes small fleets of generated traces for the tests of
// package fleet and fleet/beam, and computes the fleet numbers the slow,
// independent way: one mpc.Generate per trace, summed in the test.
package fleettest

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"mdk/gen"
	"mdk/importer"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
	"mdk/tune"
)

// Write writes n generated traces (every gen model in turn, sizes and
// lengths varying, binary and text) and one broken trace to dir, and returns
// their paths; the broken one is last.
func Write(dir string, n int) ([]string, error) {
	bin, err := trace.FormatByName("binary")
	if err != nil {
		return nil, err
	}
	txt, err := trace.FormatByName("text")
	if err != nil {
		return nil, err
	}
	var paths []string
	for i := range n {
		cfg := gen.DefaultConfig
		cfg.Model = gen.Models[i%len(gen.Models)]
		cfg.Pages = 100 + 97*(i%7)
		cfg.Windows = 12 + 5*(i%9)
		cfg.Seed = uint64(i + 1)
		f, ext := bin, ".mdkt"
		if i%5 == 4 {
			f, ext = txt, ".txt"
		}
		path := filepath.Join(dir, fmt.Sprintf("job%03d-%s%s", i, cfg.Model, ext))
		out, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		w, err := f.NewWriter(out, cfg.Header())
		if err == nil {
			err = gen.Generate(cfg, w)
		}
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		paths = append(paths, path)
	}
	// A binary trace cut short in its first window: its header parses, its
	// body does not.
	good, err := os.ReadFile(paths[0])
	if err != nil {
		return nil, err
	}
	broken := filepath.Join(dir, "broken.mdkt")
	if err := os.WriteFile(broken, good[:len(good)*2/3], 0o666); err != nil {
		return nil, err
	}
	return append(paths, broken), nil
}

// Sums are one setting's fleet sums, computed per trace with mpc.Generate.
type Sums struct {
	Jobs           int64
	FootprintBytes int64
	SavedBytes     *big.Rat // Σ S*ps/W over whole traces
	Saved          int64
	Breaking       int64 // whole-trace statistic above the bound
}

// Compute returns, for each setting of specs (parsed with window), the sums
// over the traces that open and run; and the paths that fail.
func Compute(paths []string, specs []string, window time.Duration, slo *tune.SLO) (sums []Sums, failed []string, err error) {
	settings, err := policy.ParseSpecs(specs, window, policy.SpecOptions{})
	if err != nil {
		return nil, nil, err
	}
	sums = make([]Sums, len(settings))
	for i := range sums {
		sums[i].SavedBytes = new(big.Rat)
	}
	for _, p := range paths {
		rs, err := run(p, settings)
		if err != nil {
			failed = append(failed, p)
			continue
		}
		var peak int64
		for _, a := range rs[0].AlivePerWindow {
			peak = max(peak, a)
		}
		for i, r := range rs {
			s := &sums[i]
			s.Jobs++
			s.FootprintBytes += peak * r.PageSize
			s.SavedBytes.Add(s.SavedBytes, big.NewRat(r.Saved*r.PageSize, int64(r.Windows())))
			s.Saved += r.Saved
			if slo != nil && slo.Value(r) > slo.Bound() {
				s.Breaking++
			}
		}
	}
	return sums, failed, nil
}

func run(path string, settings []policy.Setting) ([]*result.Result, error) {
	r, c, err := trace.Open(path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return mpc.Generate(context.Background(), r, settings, mpc.Options{})
}

// WritePartitioned writes every gen model's trace (pages and seeds
// varying) and a real trace of importer/testdata (cloudPhysicsIO in
// oracleGeneral, 30 s windows) to dir, each twice: partitioned into
// partitions (binary version 4, mdk convert --partitions) and
// unpartitioned; it returns the two lists of paths, in the same order.
func WritePartitioned(dir string, partitions int) (parts, whole []string, err error) {
	var trs []*trace.Trace
	var names []string
	for i, m := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = m, 2000+500*i, 60+10*i, uint64(i+1)
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			return nil, nil, err
		}
		trs, names = append(trs, tr), append(names, "gen-"+m)
	}
	real, err := RealTraces()
	if err != nil {
		return nil, nil, err
	}
	tr := real[1].Trace // cloudPhysicsIO in oracleGeneral
	trs, names = append(trs, tr), append(names, "cloudPhysicsIO")
	for i, tr := range trs {
		for _, p := range []int{partitions, 0} {
			path := filepath.Join(dir, fmt.Sprintf("%s-p%d.mdkt", names[i], p))
			var buf bytes.Buffer
			w, err := trace.NewPartitionedWriter(&buf, tr.Header, trace.Partitioning{Count: p, Seed: trace.DefaultPartitionSeed})
			if p == 0 {
				w, err = trace.NewBinaryWriter(&buf, tr.Header)
			}
			if err != nil {
				return nil, nil, err
			}
			if _, err := trace.Copy(w, tr.NewReader()); err != nil {
				return nil, nil, err
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o666); err != nil {
				return nil, nil, err
			}
			if p == 0 {
				whole = append(whole, path)
			} else {
				parts = append(parts, path)
			}
		}
	}
	return parts, whole, nil
}

// NamedTrace is a real trace of importer/testdata, imported.
type NamedTrace struct {
	Name  string
	Trace *trace.Trace
}

// RealTraces imports the real traces of importer/testdata as the import
// benchmark does: cloudPhysicsIO (csv with the block map, and
// oracleGeneral; 30 s windows), the gzip address trace and w106 (windows
// of 10,000 and 100,000 requests), and DAMON's two (1 s windows).
func RealTraces() ([]NamedTrace, error) {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "../../importer/testdata")
	var out []NamedTrace
	csv := importer.CSVOptions{TimeCol: 2, IDCol: 5, SizeCol: 4, Header: true}
	for _, in := range []struct {
		name, format, file string
		o                  importer.Options
	}{
		{"cloudPhysicsIO csv, block map", "csv", "cloudPhysicsIO.csv", importer.Options{Map: importer.MapBlock, Window: 30 * time.Second, CSV: csv}},
		{"cloudPhysicsIO oracleGeneral", "oracle-general", "cloudPhysicsIO.oracleGeneral.bin", importer.Options{Window: 30 * time.Second}},
		{"gzip address trace", "address", "gzip.trace.gz", importer.Options{WindowRequests: 10000}},
		{"w106 lbn32", "lbn32", "w106.trace.xz", importer.Options{WindowRequests: 100000}},
		{"damon.data", "damon", "damon.data", importer.Options{Window: time.Second}},
		{"damon perf script", "damon-perf", "perf.data.script", importer.Options{Window: time.Second}},
	} {
		data, err := os.ReadFile(filepath.Join(dir, in.file))
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if _, err := importer.Import(context.Background(), in.format, bytes.NewReader(data), in.file, in.o, func(h trace.Header) (trace.Writer, error) {
			return trace.NewBinaryWriter(&buf, h)
		}); err != nil {
			return nil, fmt.Errorf("%s: %w", in.file, err)
		}
		r, err := trace.NewBinaryReader(&buf, in.file)
		if err != nil {
			return nil, err
		}
		tr, err := trace.ReadAll(r)
		if err != nil {
			return nil, err
		}
		out = append(out, NamedTrace{in.name, tr})
	}
	return out, nil
}
