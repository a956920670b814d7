package collect

import (
	"errors"
	"os"
	"testing"

	"mdk/linux"
)

// TestDamonMissing: a kernel without DAMON's sysfs interface gets
// linux.ErrNoDamon from NewRecorder.
func TestDamonMissing(t *testing.T) {
	_, err := NewRecorder(Options{FS: linux.NewFS("/proc", t.TempDir()), PIDs: []int{os.Getpid()}, Window: 1e9, Tracker: TrackerDamon})
	if !errors.Is(err, linux.ErrNoDamon) {
		t.Fatalf("NewRecorder: %v", err)
	}
}

func TestDamonRegionLookup(t *testing.T) {
	d := &damonTracker{regions: []linux.DamonRegion{{Start: 0x1000, End: 0x3000, NrAccesses: 1}, {Start: 0x3000, End: 0x5000}, {Start: 0x8000, End: 0x9000, NrAccesses: 7}}}
	for vpn, want := range map[uint64]bool{0: false, 1: true, 2: true, 3: false, 4: false, 5: false, 7: false, 8: true, 9: false} {
		if got := d.accessed(vpn); got != want {
			t.Errorf("vpn %d: %v, want %v", vpn, got, want)
		}
	}
}
