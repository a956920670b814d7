package linux

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseZramStat(t *testing.T) {
	z, err := ParseZramStat([]byte("    8192     2375    12288        0    12288        0        0        3        0\n"), "mm_stat")
	if err != nil {
		t.Fatal(err)
	}
	want := ZramStat{OrigDataBytes: 8192, ComprDataBytes: 2375, MemUsedBytes: 12288, HugePages: 3}
	if z != want {
		t.Errorf("got %+v, want %+v", z, want)
	}
	// calibrate's sample: six fields are enough, same_pages is the sixth.
	z, err = ParseZramStat([]byte("    69632     4096   389120        0   389120       15\n"), "mm_stat")
	if want := (ZramStat{OrigDataBytes: 69632, ComprDataBytes: 4096, MemUsedBytes: 389120, SamePages: 15}); err != nil || z != want {
		t.Errorf("got %+v, %v, want %+v", z, err, want)
	}
	for _, bad := range []string{"", "1 2 3", "1 2 3 4 5", "1 2 x 4 5 6", "1 2 3 4 5 -6"} {
		if _, err := ParseZramStat([]byte(bad), "mm_stat"); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: error %v, want ErrFormat", bad, err)
		}
	}
}

// TestZramControl drives hot_add, comp_algorithm, disksize and hot_remove
// on a fake sysfs.
func TestZramControl(t *testing.T) {
	sys := t.TempDir()
	fsys := NewFS(t.TempDir(), sys)
	if _, err := fsys.ZramHotAdd(); !errors.Is(err, ErrNotSupported) {
		t.Errorf("no zram-control: %v, want ErrNotSupported", err)
	}
	ctl := filepath.Join(sys, "class/zram-control")
	dev := filepath.Join(sys, "block/zram3")
	for _, d := range []string{ctl, dev} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, v := range map[string]string{ctl + "/hot_add": "3\n", ctl + "/hot_remove": "", dev + "/comp_algorithm": "lzo [lzo-rle] lz4\n", dev + "/disksize": "0\n"} {
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n, err := fsys.ZramHotAdd()
	if err != nil || n != 3 {
		t.Fatalf("hot_add: %d, %v", n, err)
	}
	if a, err := fsys.ZramAlgorithm(n); err != nil || a != "lzo-rle" {
		t.Errorf("algorithm %q, %v", a, err)
	}
	if err := fsys.ZramSetDisksize(n, 1<<20); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dev + "/disksize"); string(b) != "1048576" {
		t.Errorf("disksize %q", b)
	}
	if err := fsys.ZramHotRemove(n); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ctl + "/hot_remove"); string(b) != "3" {
		t.Errorf("hot_remove %q", b)
	}
	os.WriteFile(ctl+"/hot_add", []byte("x\n"), 0o644)
	if _, err := fsys.ZramHotAdd(); !errors.Is(err, ErrFormat) {
		t.Errorf("hot_add of x: %v", err)
	}
}
