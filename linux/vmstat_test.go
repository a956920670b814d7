package linux

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseKeyValues(t *testing.T) {
	got, err := ParseKeyValues([]byte("pswpin 7\nnr_free_pages 12\npswpout 9\n"), "vmstat", []string{"pswpin", "pswpout", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"pswpin": 7, "pswpout": 9}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ParseKeyValues([]byte("pswpin x\n"), "vmstat", []string{"pswpin"}); !errors.Is(err, ErrFormat) {
		t.Errorf("bad value: %v", err)
	}
}

func TestVMStatAndMeminfo(t *testing.T) {
	fsys := fakeProc(t, map[string]string{
		"vmstat":  "pswpin 3\npswpout 4\n",
		"meminfo": "MemTotal:       16000 kB\nMemFree:         1000 kB\nMemAvailable:    8000 kB\n",
	})
	if kv, err := fsys.VMStat("pswpin", "pswpout"); err != nil || kv["pswpin"] != 3 || kv["pswpout"] != 4 {
		t.Errorf("vmstat %v, %v", kv, err)
	}
	if n, ok := fsys.MemAvailable(); !ok || n != 8000*1024 {
		t.Errorf("MemAvailable %d, %v", n, ok)
	}
}

// TestMemStatus reads VmRSS and VmSwap of a process's status in bytes; a
// missing process is an error.
func TestMemStatus(t *testing.T) {
	fsys := fakeProc(t, map[string]string{
		"42/status": "Name:\tmemcached\nPid:\t42\nVmRSS:\t    9600 kB\nRssAnon:\t    8000 kB\nVmSwap:\t   22300 kB\n",
	})
	rss, swap, err := fsys.MemStatus(42)
	if err != nil || rss != 9600*1024 || swap != 22300*1024 {
		t.Errorf("MemStatus: %d, %d, %v; want %d, %d", rss, swap, err, 9600*1024, 22300*1024)
	}
	if _, _, err := fsys.MemStatus(43); err == nil {
		t.Error("no such process: no error")
	}
}

// TestRealKernelFiles reads this machine's own files.
func TestRealKernelFiles(t *testing.T) {
	fsys := Default()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no procfs")
	}
	if _, err := fsys.MajorFaults(os.Getpid()); err != nil {
		t.Errorf("majflt: %v", err)
	}
	if n, ok := fsys.SelfRSS(); !ok || n <= 0 {
		t.Errorf("RSS %d, %v", n, ok)
	}
	if rss, _, err := fsys.MemStatus(os.Getpid()); err != nil || rss <= 0 {
		t.Errorf("MemStatus: RSS %d, %v", rss, err)
	}
	if _, err := fsys.Swaps(); err != nil {
		t.Errorf("swaps: %v", err)
	}
	if fsys.KernelRelease() == "" {
		t.Error("no kernel release")
	}
}
