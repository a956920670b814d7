package importer

import (
	"bytes"
	"context"
	"testing"
	"time"

	"mdk/trace"
)

// discardWriter is a trace.Writer that drops windows, so that benchmarks
// measure the importer alone.
type discardWriter struct{}

func (discardWriter) WriteWindow(*trace.Window) error { return nil }
func (discardWriter) Close() error                    { return nil }

// benchImport imports testdata/file repeatedly and reports records/s and
// page accesses/s (records times the pages each touches).
func benchImport(b *testing.B, format, file string, o Options) {
	data := readTestdata(b, file)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var records, accesses int64
	for b.Loop() {
		st, err := Import(context.Background(), format, bytes.NewReader(data), file, o, func(trace.Header) (trace.Writer, error) {
			return discardWriter{}, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		records += st.Records
		accesses += st.Accesses
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(accesses)/b.Elapsed().Seconds(), "page-accesses/s")
}

func BenchmarkImport(b *testing.B) {
	csvOpts := CSVOptions{TimeCol: 2, IDCol: 5, SizeCol: 4, Header: true}
	b.Run("csv-block", func(b *testing.B) {
		benchImport(b, "csv", "cloudPhysicsIO.csv", Options{Map: MapBlock, Window: 30 * time.Second, CSV: csvOpts})
	})
	b.Run("csv-object", func(b *testing.B) {
		benchImport(b, "csv", "cloudPhysicsIO.csv", Options{Window: 30 * time.Second, CSV: csvOpts})
	})
	b.Run("oracle-general", func(b *testing.B) {
		benchImport(b, "oracle-general", "cloudPhysicsIO.oracleGeneral.bin", Options{Window: 30 * time.Second})
	})
	b.Run("address-gzip", func(b *testing.B) {
		benchImport(b, "address", "gzip.trace.gz", Options{WindowRequests: 10000})
	})
	b.Run("lbn32-xz", func(b *testing.B) {
		benchImport(b, "lbn32", "w106.trace.xz", Options{WindowRequests: 100000})
	})
	b.Run("damon-zlib", func(b *testing.B) {
		benchImport(b, "damon", "damon.data", Options{Window: time.Second})
	})
	b.Run("damon-perf", func(b *testing.B) {
		benchImport(b, "damon-perf", "perf.data.script", Options{Window: time.Second})
	})
}
