package linux

import (
	"fmt"
	"sync"
)

// Feature is a kernel facility whose presence a probe decides once per
// process.
type Feature int

const (
	// FeaturePidfd: pidfd_open(2), Linux 5.3.
	FeaturePidfd Feature = iota
	// FeatureProcessMadvise: process_madvise(2) with MADV_PAGEOUT, Linux
	// 5.10.
	FeatureProcessMadvise
	numFeatures
)

var featureNames = [numFeatures]string{"pidfd_open (Linux 5.3)", "process_madvise(MADV_PAGEOUT) (Linux 5.10)"}

// String names the feature and the kernel that brought it.
func (f Feature) String() string {
	if f >= 0 && f < numFeatures {
		return featureNames[f]
	}
	return fmt.Sprintf("Feature(%d)", int(f))
}

var probes [numFeatures]struct {
	once sync.Once
	err  error
}

// Probe returns nil when the running kernel has f, else an error wrapping
// [ErrNotSupported] that says what is missing. The probe runs once per
// process (on this process itself, changing nothing); later calls return
// the cached answer.
func Probe(f Feature) error {
	if f < 0 || f >= numFeatures {
		return fmt.Errorf("%w: unknown feature %d", ErrNotSupported, int(f))
	}
	p := &probes[f]
	p.once.Do(func() { p.err = probe(f) })
	return p.err
}
