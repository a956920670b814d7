package linux

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeProc returns an FS whose proc root holds the files given.
func fakeProc(t testing.TB, files map[string]string) FS {
	t.Helper()
	proc := t.TempDir()
	for name, v := range files {
		p := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return NewFS(proc, t.TempDir())
}

func TestSwaps(t *testing.T) {
	in := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n" +
		"/dev/zram1                              partition\t65532\t\t12\t\t100\n" +
		"/swap\\040file                          file\t\t1048572\t\t0\t\t-2\n"
	fsys := fakeProc(t, map[string]string{"swaps": in})
	got, err := fsys.Swaps()
	if err != nil {
		t.Fatal(err)
	}
	want := []Swap{
		{Filename: "/dev/zram1", Type: "partition", SizeBytes: 65532 * 1024, UsedBytes: 12 * 1024, Priority: 100},
		{Filename: `/swap\040file`, Type: "file", SizeBytes: 1048572 * 1024, Priority: -2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if free, err := fsys.SwapFree(); err != nil || free != (65532-12+1048572)*1024 {
		t.Errorf("free %d, %v", free, err)
	}
	if err := fsys.CheckSwap(); err != nil {
		t.Errorf("CheckSwap: %v", err)
	}
	for _, bad := range []string{"h\n/dev/x partition 1 2\n", "h\n/dev/x partition 1 z 3\n", "h\n/dev/x partition -1 0 3\n"} {
		if _, err := fakeProc(t, map[string]string{"swaps": bad}).Swaps(); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v, want ErrFormat", bad, err)
		}
	}
	if err := fakeProc(t, map[string]string{"swaps": "Filename Type Size Used Priority\n"}).CheckSwap(); !errors.Is(err, ErrNoSwap) {
		t.Errorf("no swap: %v", err)
	}
}

func TestMemoryPressure(t *testing.T) {
	fsys := fakeProc(t, map[string]string{
		"pressure/memory":        "some avg10=1.50 avg60=0.00 avg300=0.00 total=7\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"other/memory.pressure":  "some avg10=12.34 avg60=0.00 avg300=0.00 total=5\nfull avg10=1.00 avg60=0.00 avg300=0.00 total=0\n",
		"bad/memory.pressure":    "some avg10=x\n",
		"nosome/memory.pressure": "full avg10=1.00 avg60=0.00 avg300=0.00 total=0\n",
	})
	if v, err := fsys.MemoryPressure(""); err != nil || v != 1.5 {
		t.Errorf("system: %v, %v", v, err)
	}
	if v, err := fsys.MemoryPressure(filepath.Join(fsys.Proc, "other/memory.pressure")); err != nil || v != 12.34 {
		t.Errorf("cgroup file: %v, %v", v, err)
	}
	for _, f := range []string{"bad", "nosome"} {
		if _, err := fsys.MemoryPressure(filepath.Join(fsys.Proc, f, "memory.pressure")); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", f, err)
		}
	}
	if _, err := fsys.MemoryPressure(filepath.Join(fsys.Proc, "missing")); err == nil {
		t.Error("a missing file read")
	}
}
