package collect

import (
	"fmt"
	"io"
	"strings"
	"time"

	"mdk/linux"
	"mdk/trace"
)

// Options configure a [Recorder].
type Options struct {
	FS linux.FS // kernel files; linux.Default() for the running kernel

	// Targets: either PIDs, or a Cgroup whose cgroup.procs is read at
	// every scan (processes may join and leave).
	PIDs   []int
	Cgroup string

	// Tracker says how accesses are seen: TrackerIdle (the default, idle
	// page tracking) or TrackerDamon (DAMON's vaddr operations; one pid).
	Tracker Tracker
	Damon   DamonIntervals // DAMON's monitoring attributes (TrackerDamon)

	// Pages says what a page of the trace is: PagesVirtual (the default, a
	// process's virtual page) or PagesPhysical (a page frame, counted once
	// however many target processes map it; physical.go).
	Pages PageKey

	Window   time.Duration // window length (> 0)
	Duration time.Duration // stop after this long; 0: until the targets exit or ctx ends

	Log io.Writer // per-window cost and warnings; nil: discarded

	// Sample, if set, records only the pages it keeps (trace.Sample.Keep
	// of (space, virtual page number)): the others are dropped as their
	// pagemap entries are read, so their idle bits are never read or set.
	// The trace's header carries the sample, so every command scales its
	// counts.
	Sample trace.Sample

	// Partitions, if not 0, makes RecordFile write a binary trace
	// partitioned into this many partitions (trace.NewPartitionedWriter,
	// docs/trace-format.md) by the sampling hash: with the Sample's seed if
	// sampled, else trace.DefaultPartitionSeed. A later sample with that
	// seed then reads only the partitions that hold it. Each window is
	// written as a segment of its own while recording, so a recorder that
	// is killed leaves every completed window; a clean end rewrites the
	// file in full segments.
	Partitions int

	// AfterScan, if set, is called after scan k (k = 0, 1, ...) has marked
	// the pages idle and written window k-1, before the recorder waits for
	// the next scan. Progress displays and tests (a fake kernel that acts
	// between scans) use it.
	AfterScan func(scan int)
}

// Cost is the recorder's own cost of one scan.
type Cost struct {
	Scan  time.Duration // wall time of the scan
	CPU   time.Duration // user+system CPU time of the recorder process during the scan
	Pages int64         // pages scanned (present or swapped)
}

// Summary describes a finished recording.
type Summary struct {
	Windows int
	Spaces  []int // pid of each space, by space number
	Total   Cost  // sums over all scans
	Max     Cost  // per-field maxima over all scans
	Scans   int
	Overrun int // scans that started late because the previous one overran its window
	Reason  string
}

// String is the one-paragraph summary put in the trace's description.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "recorder cost over %d scans: scan time mean %v max %v; CPU mean %v max %v; pages scanned mean %d max %d",
		s.Scans, mean(s.Total.Scan, s.Scans), s.Max.Scan, mean(s.Total.CPU, s.Scans), s.Max.CPU, meanInt(s.Total.Pages, s.Scans), s.Max.Pages)
	if s.Overrun > 0 {
		fmt.Fprintf(&b, "; %d scans overran their window", s.Overrun)
	}
	if s.Reason != "" {
		fmt.Fprintf(&b, "; stopped: %s", s.Reason)
	}
	return b.String()
}

func mean(d time.Duration, n int) time.Duration {
	if n == 0 {
		return 0
	}
	return (d / time.Duration(n)).Round(time.Microsecond)
}

func meanInt(v int64, n int) int64 {
	if n == 0 {
		return 0
	}
	return v / int64(n)
}

// partitioning is the partitions RecordFile writes.
func (o Options) partitioning() trace.Partitioning {
	seed := uint64(trace.DefaultPartitionSeed)
	if !o.Sample.All() {
		seed = o.Sample.Seed
	}
	return trace.Partitioning{Count: o.Partitions, Seed: seed}
}
