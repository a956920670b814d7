package trace_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"mdk/internal/testutil"
	"mdk/trace"
)

// benchTextTrace returns a seeded random trace of about n records (accesses,
// births and frees) written in the text format, and its exact record count.
// 1000 windows; 64Ki pages in two address spaces, user-space page numbers
// (11 decimal digits); accesses skewed to a hot set; births and frees of a
// churning set.
func benchTextTrace(b *testing.B, n int) ([]byte, int) {
	b.Helper()
	rng := testutil.Rand(42)
	const windows = 1000
	perWindow := n / windows
	bl := trace.NewBuilder(trace.DefaultHeader())
	page := func(i int) trace.Page {
		return trace.Page{Space: uint32(i & 1), Page: 0x7f3a_0000_0 + uint64(i)}
	}
	for w := range windows {
		for range perWindow * 9 / 10 {
			if rng.IntN(4) == 0 {
				bl.Add(w, trace.Access, page(rng.IntN(1<<16)))
			} else {
				bl.Add(w, trace.Access, page(rng.IntN(1<<12)))
			}
		}
		for range perWindow / 20 {
			bl.Add(w, trace.Birth, page(1<<16+rng.IntN(1<<14)))
			bl.Add(w, trace.Free, page(1<<16+rng.IntN(1<<14)))
		}
	}
	tr := bl.Trace()
	records := 0
	for i := range tr.Windows {
		records += tr.Windows[i].Records()
	}
	return testutil.EncodeText(b, tr), records
}

func BenchmarkTextReader(b *testing.B) {
	data, records := benchTextTrace(b, 1_100_000)
	b.Logf("%d records, %d bytes", records, len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := textCPUTime()
	for b.Loop() {
		r, err := trace.NewTextReader(bytes.NewReader(data), "bench.txt")
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			w, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got += w.Records()
		}
		if got != records {
			b.Fatalf("read %d records, want %d", got, records)
		}
	}
	textReportRecords(b, records, cpu0)
}

func BenchmarkTextWriter(b *testing.B) {
	data, records := benchTextTrace(b, 1_100_000)
	r, err := trace.NewTextReader(bytes.NewReader(data), "bench.txt")
	if err != nil {
		b.Fatal(err)
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := textCPUTime()
	for b.Loop() {
		w, err := trace.NewTextWriter(io.Discard, tr.Header)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := trace.Copy(w, tr.NewReader()); err != nil {
			b.Fatal(err)
		}
	}
	textReportRecords(b, records, cpu0)
}

// textReportRecords reports records/s over wall time and, where measured,
// records/cpu-s over the process's CPU time since cpu0 (which includes the
// garbage collector), the figure to read on a shared, loaded machine.
func textReportRecords(b *testing.B, records int, cpu0 time.Duration) {
	total := float64(records) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "records/s")
	if cpu := textCPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "records/cpu-s")
	}
}
