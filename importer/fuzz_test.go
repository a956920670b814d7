package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Every fuzz target imports arbitrary bytes with small limits and checks
// that the importer either succeeds with a trace that obeys the Window
// contract (memWriter checks it) or fails with an error that says where.

// fuzzOptions bounds the work one input can cause.
func fuzzOptions(o Options) Options {
	o.MaxWindows = 1 << 12
	o.MaxRecordPages = 1 << 10
	return o
}

func fuzzImport(t *testing.T, format string, data []byte, o Options) {
	// The fuzzing engine has no per-input timeout: make a slow input a crash
	// so that it is kept.
	timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("import of %d bytes took over 10s", len(data))) })
	defer timer.Stop()
	_, st, err := importBytes(t, format, data, "fuzz", fuzzOptions(o))
	if err == nil {
		if st.Windows > 1<<12 {
			t.Fatalf("%d windows beyond the limit", st.Windows)
		}
		return
	}
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error without a position: %v", err)
	}
	if se.Name != "fuzz" && se.Name[:4] != "fuzz" {
		t.Fatalf("error names %q: %v", se.Name, err)
	}
}

// seedFile adds the first n bytes of a testdata file, decompressed with
// comp (or as stored if comp is ""), to f's corpus.
func seedFile(f *testing.F, name string, n int) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:min(n, len(b))])
}

func FuzzCSV(f *testing.F) {
	seedFile(f, "cloudPhysicsIO.csv", 300)
	f.Add([]byte("1,2,3\n1,0x10,4\n\n2,3,4\r\n"))
	f.Add(compress(f, CompressGzip, []byte("1,2,3\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range []Mapping{MapObject, MapBlock} {
			fuzzImport(t, "csv", data, Options{Map: m, Window: 30 * time.Second, CSV: CSVOptions{TimeCol: 2, IDCol: 5, SizeCol: 4, Header: true}})
		}
		fuzzImport(t, "csv", data, Options{WindowRequests: 3, CSV: CSVOptions{IDCol: 1, Delimiter: ' ', IDIsString: true}})
	})
}

func FuzzOracleGeneral(f *testing.F) {
	seedFile(f, "cloudPhysicsIO.oracleGeneral.bin", 24*20)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, "oracle-general", data, Options{Map: MapBlock})
		fuzzImport(t, "oracle-general", data, Options{AllowBackwards: true})
	})
}

func FuzzAddress(f *testing.F) {
	f.Add([]byte("s 0x1fffff58 1\nl 0x1fffff60 1\nl 0x1fffff88 6\n"))
	f.Add(compress(f, CompressGzip, []byte("s 0x1fffff58 1\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, "address", data, Options{WindowInstructions: 5})
		fuzzImport(t, "address", data, Options{WindowRequests: 2})
	})
}

func FuzzLBN32(f *testing.F) {
	f.Add([]byte{0x3d, 0xc7, 0x09, 0x00, 0x3e, 0xc7, 0x09, 0x00})
	f.Add(compress(f, CompressXZ, []byte{1, 0, 0, 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, "lbn32", data, Options{WindowRequests: 2})
	})
}

func FuzzDamon(f *testing.F) {
	small := `[{"target_id": 1, "snapshots": [{"start_time": "1,000", "end_time": "2000", "regions": [` +
		`{"start": "4,096", "end": "16384", "nr_accesses": {"samples": 3, "percent": null}}, {"start": 16384, "end": 20000, "nr_accesses": 0}]}]},` +
		`{"snapshots": [{"start_time": 1500, "regions": [{"start": "0", "end": "1", "nr_accesses": {"samples": null, "percent": 5}}]}]}]`
	f.Add([]byte(small))
	f.Add(compress(f, CompressZlib, []byte(small)))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, "damon", data, Options{Window: time.Microsecond})
		fuzzImport(t, "damon", data, Options{WindowRequests: 1})
	})
}

func FuzzDamonPerf(f *testing.F) {
	seedFile(f, "perf.data.script", 400)
	f.Add([]byte("k 1 [0] 1.5: damon:damon_aggregated: target_id=1 nr_regions=1 4096-8192: 3 7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, "damon-perf", data, Options{Window: time.Millisecond})
	})
}

func FuzzLackey(f *testing.F) {
	f.Add([]byte(lackeySample))
	f.Add([]byte("I  1000,4\n S ffc,8\n M 1ffe,4\n==1== x\n--1-- y\n**1** z\n"))
	f.Add(compress(f, CompressGzip, []byte("I  ffffffffffffffff,1\n L fffffffffffffff0,16\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, "lackey", data, Options{WindowInstructions: 16})
	})
}
