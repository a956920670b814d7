package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"mdk/gen"
	"mdk/trace"
)

// BenchmarkBinaryRead reads a generated trace of about 55 million access
// records (gen's mix model on 1.2M pages, 240 windows) from a file, decoding
// every window to dense IDs.
func BenchmarkBinaryRead(b *testing.B) {
	cfg := gen.DefaultConfig
	cfg.Pages = 1_200_000
	path := filepath.Join(b.TempDir(), "bench.mdkt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w, err := trace.NewBinaryWriter(f, cfg.Header())
	if err != nil {
		b.Fatal(err)
	}
	if err := gen.Generate(cfg, w); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var accesses, records int64
	cpu0 := binCPUTime()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := trace.NewBinaryReader(f, path)
		if err != nil {
			b.Fatal(err)
		}
		accesses, records = 0, 0
		for {
			win, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			accesses += int64(len(win.Accessed))
			records += int64(win.Records())
		}
		f.Close()
	}
	if cpu := (binCPUTime() - cpu0).Seconds(); cpu > 0 {
		b.ReportMetric(float64(accesses)*float64(b.N)/cpu, "access-records/cpu-s")
	}
	b.ReportMetric(float64(accesses)*float64(b.N)/b.Elapsed().Seconds(), "access-records/s")
	b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(accesses), "access-records/file")
	b.ReportMetric(float64(st.Size())/float64(records), "B/record")
}

// BenchmarkBinaryWrite writes each gen model's default trace (held in
// memory) to io.Discard and reports the file size per record.
func BenchmarkBinaryWrite(b *testing.B) {
	for _, m := range gen.Models {
		b.Run(m, func(b *testing.B) {
			cfg := gen.DefaultConfig
			cfg.Model = m
			tr, err := trace.ReadAll(gen.NewReader(cfg))
			if err != nil {
				b.Fatal(err)
			}
			var records int64
			for _, w := range tr.Windows {
				records += int64(w.Records())
			}
			var buf bytes.Buffer
			b.ReportAllocs()
			cpu0 := binCPUTime()
			for b.Loop() {
				buf.Reset()
				w, err := trace.NewBinaryWriter(&buf, tr.Header)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := trace.Copy(w, tr.NewReader()); err != nil {
					b.Fatal(err)
				}
			}
			if cpu := (binCPUTime() - cpu0).Seconds(); cpu > 0 {
				b.ReportMetric(float64(records)*float64(b.N)/cpu, "records/cpu-s")
			}
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64(buf.Len())/float64(records), "B/record")
			b.ReportMetric(float64(records), "records/file")
		})
	}
}
