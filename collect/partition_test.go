package collect

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/trace"
)

// TestRecorderPartitioned: a sampled recording with Partitions writes a
// partitioned trace (version 4) partitioned by the sampler's hash: it
// holds the same events as the unpartitioned sampled recording, a smaller
// sample of it with the same seed reads only the partitions that hold it
// and equals that sample of the unpartitioned recording, and while it is
// being recorded the file holds every completed window (one segment a
// window) before the clean end rewrites it.
func TestRecorderPartitioned(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		s := trace.Sample{PPM: 500000, Seed: seed}
		_, plain, _, _, _ := recordFake(t, s)
		midway := -1
		_, tr, _, _, _ := recordFakeParts(t, s, 4, func(scan int, out string) {
			if scan != 3 {
				return
			}
			// Windows 0..2 are written: a reader sees them, then the
			// truncation of a recording that has not ended.
			r, c, err := trace.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			n := 0
			for {
				if _, err = r.Read(); err != nil {
					break
				}
				n++
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("seed %d: reading the recording midway: %v, want a truncation", seed, err)
			}
			midway = n
		})
		if midway != 3 {
			t.Errorf("seed %d: midway the file held %d windows, want 3", seed, midway)
		}
		if d := cmp.Diff(events(plain), events(tr), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("seed %d: partitioned recording (-plain +partitioned):\n%s", seed, d)
		}
		if tr.Header.Sample != s {
			t.Errorf("seed %d: header sample %v, want %v", seed, tr.Header.Sample, s)
		}
	}
}

// TestRecordFilePartitionedSubSample: the partitioned file itself: its
// version and partitions (trace.DefaultCuts: a ladder of three, then one
// of the rest), and a 5% sample of the half sample (a tenth of it) read
// from exactly the ladder's three partitions.
func TestRecordFilePartitionedSubSample(t *testing.T) {
	s := trace.Sample{PPM: 500000, Seed: 2}
	_, plain, _, _, _ := recordFake(t, s)
	var path string
	recordFakeParts(t, s, 4, func(scan int, out string) { path = out })
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if data[8] != trace.BinaryPartitionedVersion {
		t.Fatalf("version %d, want %d", data[8], trace.BinaryPartitionedVersion)
	}
	r, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pr, ok := r.(trace.PartitionedReader)
	if !ok || !pr.Partitioning().Equal(trace.Partitioning{Count: 4, Seed: 2, Cuts: []uint32{0, 500, 5000, 50000, 500000}}) {
		t.Fatalf("reader %T, partitions %+v", r, pr.Partitioning())
	}
	tenth := trace.Sample{PPM: 50000, Seed: 2}
	sr, err := trace.NewSampleReader(r, tenth)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Selected() != 3 {
		t.Errorf("a tenth of a half sample reads %d of 4 partitions, want 3", pr.Selected())
	}
	got, err := trace.ReadAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := trace.NewSampleReader(plain.NewReader(), tenth)
	if err != nil {
		t.Fatal(err)
	}
	want, err := trace.ReadAll(ws)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(events(want), events(got), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("5%% sample (-of the plain recording +of the partitions):\n%s", d)
	}
}
