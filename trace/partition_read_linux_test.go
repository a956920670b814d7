package trace_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mdk/gen"
	"mdk/trace"
)

// readChars is the bytes this process has read by system calls so far
// (rchar of /proc/self/io).
func readChars(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Skip("no rchar in /proc/self/io")
	return 0
}

// TestSampleReadsItsPartitions: a 1% sample of a trace of 100 partitions
// reads the index and the first partition (version 5: the first two, 0.1%
// and 0.9% of the pages), and skips the rest by seeking: 2.9% of the
// README's trace in version 4 (each segment's index is read whole: 240
// windows hold 4.45 M accesses, 185 a partition's window), under 4%; in
// version 3 it also reads every new page, 6.2%, under a tenth. Its windows
// are the sample's.
func TestSampleReadsItsPartitions(t *testing.T) {
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Seed = "mix", 7
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range partVersions {
		t.Run(fmt.Sprint("version ", v), func(t *testing.T) { sampleReadsItsPartitions(t, tr, v, 100) })
	}
	t.Run("version 5, 12 partitions", func(t *testing.T) {
		sampleReadsItsPartitions(t, tr, trace.BinaryPartitionedVersion, trace.DefaultPartitions)
	})
}

func sampleReadsItsPartitions(t *testing.T, tr *trace.Trace, v uint32, P int) {
	data := encodePartsV(t, tr, P, 1, v)
	limit := int64(len(data)) / 10
	if v != trace.BinaryPartitionedV3 {
		limit = int64(len(data)) * 4 / 100
	}
	path := filepath.Join(t.TempDir(), "p.mdkt")
	var err error
	if err = os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("MDK_PART_TRACE"); p != "" {
		// Measure a partitioned trace of one's own (docs/bench.md).
		path, tr = p, nil
		if data, err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
		limit = int64(len(data)) / 10
	}
	s := trace.Sample{PPM: 10000, Seed: 1}
	if tr == nil {
		// And a 10% sample (docs/bench.md).
		readSample(t, path, trace.Sample{PPM: 100000, Seed: 1}, len(data))
	}
	got, read := readSample(t, path, s, len(data))
	if read > limit {
		t.Fatalf("a 1%% sample read %d of the file's %d bytes", read, len(data))
	}
	if tr == nil {
		return
	}
	ws, err := trace.NewSampleReader(tr.NewReader(), s)
	if err != nil {
		t.Fatal(err)
	}
	want, err := trace.ReadAll(ws)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(unpartitioned(t, got), unpartitioned(t, want)) {
		t.Fatal("the sample read from the partitions differs from the sample of the trace")
	}
}

// readSample reads sample s of the trace at path and returns it and the
// bytes read.
func readSample(t *testing.T, path string, s trace.Sample, size int) (*trace.Trace, int64) {
	before := readChars(t)
	r, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := trace.NewSampleReader(r, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := trace.ReadAll(sr)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	read := readChars(t) - before
	t.Logf("%s of %d bytes: read %d (%.1f%%)", s, size, read, 100*float64(read)/float64(size))
	return got, read
}

// TestSampleReadsItsShareOfEachSegment: a sample of a trace of many
// segments (mdk record flushes a segment a window) reads about its share
// of each one: its partitions' payloads and the index, not a read buffer's
// worth past them after each seek (a 64 KiB buffer refilled after each
// seek read 1.9% of the benchmark trace for a 1% sample, 1.1% with the
// small buffer).
func TestSampleReadsItsShareOfEachSegment(t *testing.T) {
	cfg := gen.DefaultConfig
	cfg.Model, cfg.Seed, cfg.Pages, cfg.Windows = "mix", 7, 1_000_000, 24
	tr, err := trace.ReadAll(gen.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := trace.NewPartitionedWriter(&buf, tr.Header, trace.Partitioning{Count: trace.DefaultPartitions, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := tr.NewReader()
	for {
		win, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteWindow(win); err != nil {
			t.Fatal(err)
		}
		if err := w.(interface{ Flush() error }).Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.mdkt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// 24 segments of about 1/24 of the file each; the 1% sample's share
	// is about 1.2% of each (small partitions cost more a record), the
	// first read fills one 64 KiB buffer, and each segment may read up to
	// a KiB past its wanted bytes (a 4 KiB buffer read 160 KB here).
	_, read := readSample(t, path, trace.Sample{PPM: 10000, Seed: 1}, buf.Len())
	if limit := int64(buf.Len())*2/100 + 64<<10 + int64(cfg.Windows)<<10; read > limit {
		t.Fatalf("a 1%% sample of %d segments read %d of the file's %d bytes, over %d", cfg.Windows, read, buf.Len(), limit)
	}
}
