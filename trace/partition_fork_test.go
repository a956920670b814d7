package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// TestForkPartitions: the readers ForkPartitions opens on a trace file
// (at the file's start or past a prefix of other bytes) each give their
// partitions' windows as the reader of every partition does, read apart
// from each other and from the reader they came from, which still reads the
// whole trace; a fork reads nothing of a partition not its own; on every
// partitioned version.
func TestForkPartitions(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 31))
	dir := t.TempDir()
	for i := range testutil.Count(30) {
		tr := binRandom(rng)
		P := []int{2, 5, 13}[i%3]
		data := encodePartsV(t, tr, P, uint64(i), partVersions[i%len(partVersions)])
		all := partWindows(t, data, false)
		prefix := bytes.Repeat([]byte{0xA5}, (i%2)*(1+rng.IntN(5000)))
		path := filepath.Join(dir, "p.mdkt")
		if err := os.WriteFile(path, append(prefix, data...), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(int64(len(prefix)), io.SeekStart); err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReaderAuto(f, path)
		if err != nil {
			t.Fatal(err)
		}
		pr := r.(trace.PartitionedReader)
		// Two forks of every other partition, in turn.
		var shares [2][]int
		for p := range P {
			shares[(p+i)%2] = append(shares[(p+i)%2], p)
		}
		var forks [2]trace.PartitionedReader
		for k, parts := range shares {
			fr, err := pr.(trace.PartitionForker).ForkPartitions(parts)
			if err != nil {
				t.Fatalf("trace %d: fork of %v: %v", i, parts, err)
			}
			if fr.Selected() != len(parts) {
				t.Fatalf("trace %d: fork of %v: Selected %d", i, parts, fr.Selected())
			}
			forks[k] = fr
		}
		for k, parts := range shares {
			got := readPartWindows(t, forks[k], parts, false)
			for _, p := range parts {
				if d := windowsDiffer(got[p], all[p]); d >= 0 {
					t.Fatalf("trace %d, fork of %v: partition %d's window %d differs from the whole reader's", i, parts, p, d)
				}
			}
			for p := range P {
				if !slices.Contains(parts, p) {
					if err := forks[k].PartitionWindow(p, new(trace.Window), false); err == nil {
						t.Fatalf("trace %d: fork of %v read partition %d", i, parts, p)
					}
				}
			}
		}
		// The reader forked from reads every partition still.
		got := readPartWindows(t, pr, intsTo(P), false)
		for p := range P {
			if d := windowsDiffer(got[p], all[p]); d >= 0 {
				t.Fatalf("trace %d: after the forks, partition %d's window %d differs from the whole reader's", i, p, d)
			}
		}
		if _, err := pr.(trace.PartitionForker).ForkPartitions([]int{0}); err == nil {
			t.Fatalf("trace %d: forked after reading", i)
		}
		f.Close()
	}
}

// TestForkPartitionsRefused: a fork is refused on a pipe (the reader still
// reads it), of a partition out of range or twice, and after a segment is
// read.
func TestForkPartitionsRefused(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 32))
	tr := binRandom(rng)
	data := encodePartsV(t, tr, 4, 1, trace.BinaryPartitionedVersion)
	all := partWindows(t, data, false)
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		pipeW.Write(data)
		pipeW.Close()
	}()
	defer pipeR.Close()
	r, err := trace.NewReaderAuto(pipeR, "pipe")
	if err != nil {
		t.Fatal(err)
	}
	pr := r.(trace.PartitionedReader)
	if _, err := pr.(trace.PartitionForker).ForkPartitions([]int{0, 1}); err == nil || !strings.Contains(err.Error(), "pipe") {
		t.Fatalf("fork of a pipe: got %v, want an error that names a pipe", err)
	}
	got := readPartWindows(t, pr, intsTo(4), false)
	for p := range 4 {
		if d := windowsDiffer(got[p], all[p]); d >= 0 {
			t.Fatalf("a pipe after a refused fork: partition %d's window %d differs", p, d)
		}
	}
	r, err = trace.NewReaderAuto(bytes.NewReader(data), "p.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	fk := r.(trace.PartitionForker)
	for _, parts := range [][]int{{4}, {-1}, {1, 1}} {
		if _, err := fk.ForkPartitions(parts); err == nil {
			t.Errorf("fork of %v of 4 partitions: no error", parts)
		}
	}
	if _, _, err := r.(trace.PartitionedReader).NextSegment(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if _, err := fk.ForkPartitions([]int{0}); err == nil {
		t.Error("fork after a segment (or the end): no error")
	}
}

func intsTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestForkPartitionsDamage: a fork reads its payloads when their first
// windows are decoded, so damage it meets then is reported as the shared
// reader reports it: a byte flipped in a payload gives the reader of every
// partition's error, a file cut short after the fork an error (no panic),
// and a fork of the other partitions reads on unharmed.
func TestForkPartitionsDamage(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 33))
	dir := t.TempDir()
	for i := range testutil.Count(40) {
		tr := binRandom(rng)
		data := encodePartsV(t, tr, 4, uint64(i), partVersions[1+i%2])
		if len(tr.Windows) == 0 {
			continue
		}
		bad := bytes.Clone(data)
		at := len(data)/4 + rng.IntN(len(data)*3/4)
		bad[at] ^= byte(1 + rng.IntN(255))
		path := filepath.Join(dir, "bad.mdkt")
		want := readAllPartitions(bytes.NewReader(bad), path, intsTo(4))
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := trace.NewReaderAuto(f, path)
		if err != nil {
			f.Close()
			continue // the header was hit
		}
		fr, err := r.(trace.PartitionForker).ForkPartitions(intsTo(4))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllPartitions(fr, path, intsTo(4)); got != want {
			t.Fatalf("trace %d, byte %d flipped: the fork's error\n\t%s\nthe reader's\n\t%s", i, at, got, want)
		}
		f.Close()
		// Cut short after the fork: an error, or (what it read was in its
		// read-ahead buffer or before the cut) the intact windows.
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		all, msg := readPartitions(bytes.NewReader(data), path, intsTo(4))
		if msg != "" {
			t.Fatal(msg)
		}
		var intact []trace.Window // partitions 0 and 2
		for k, w := range all {
			if k%2 == 0 {
				intact = append(intact, w)
			}
		}
		f, err = os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err = trace.NewReaderAuto(f, path)
		if err != nil {
			t.Fatal(err)
		}
		fr, err = r.(trace.PartitionForker).ForkPartitions([]int{0, 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, int64(rng.IntN(len(data)))); err != nil {
			t.Fatal(err)
		}
		got, msg := readPartitions(fr, path, []int{0, 2})
		if msg == "" && windowsDiffer(got, intact) >= 0 {
			t.Fatalf("trace %d: a fork read a file cut short after the fork without an error, and windows that differ", i)
		}
		f.Close()
	}
}

// readAllPartitions reads partitions parts of the trace (an io.Reader of
// it, read as name, or a reader selected to parts) to its end and returns
// the error's text ("" at a clean end).
func readAllPartitions(src any, name string, parts []int) string {
	_, msg := readPartitions(src, name, parts)
	return msg
}

// readPartitions is readAllPartitions that returns the windows read too,
// each window's partitions in turn.
func readPartitions(src any, name string, parts []int) ([]trace.Window, string) {
	var pr trace.PartitionedReader
	switch s := src.(type) {
	case trace.PartitionedReader:
		pr = s
	case io.Reader:
		r, err := trace.NewBinaryReader(s, name)
		if err != nil {
			return nil, err.Error()
		}
		pr = r.(trace.PartitionedReader)
	}
	var out []trace.Window
	for {
		_, n, err := pr.NextSegment()
		if errors.Is(err, io.EOF) {
			return out, ""
		}
		if err != nil {
			return out, err.Error()
		}
		for range n {
			for _, p := range parts {
				var w trace.Window
				if err := pr.PartitionWindow(p, &w, false); err != nil {
					return out, err.Error()
				}
				out = append(out, w)
			}
		}
	}
}
