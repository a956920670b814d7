package collect

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mdk/linux"
	"mdk/trace"
)

// TestRecorderMapsSidecar: mdk record writes the targets' mappings beside
// the trace (TRACE.maps), each once, with the window it was first seen in
// and its space; a mapping added later carries its later window.
func TestRecorderMapsSidecar(t *testing.T) {
	k := newFakeKernel(t, 1<<16)
	k.spawn(100)
	k.mmap(100, 0x400, 4, "[heap]", 0x400, 0x401)
	k.mmap(100, 0x1000, 2, "", 0x1000)
	k.spawn(200)
	k.mmap(200, 0x400, 1, "/usr/bin/my app", 0x400)
	script := []func(){
		2: func() { k.mmap(100, 0x2000, 1, "[stack]", 0x2000) },
	}
	const window = 20 * time.Millisecond
	var log strings.Builder
	r, err := NewRecorder(Options{
		FS: k.FS(), PIDs: []int{100, 200}, Window: window, Duration: 5 * window, Log: &log,
		AfterScan: func(scan int) {
			if scan < len(script) && script[scan] != nil {
				script[scan]()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "rec.mdkt")
	if _, err := r.RecordFile(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out + trace.MapsSuffix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := trace.ReadMaps(f, out+trace.MapsSuffix)
	if err != nil {
		t.Fatal(err)
	}
	ps := uint64(linux.PageSize())
	want := []trace.Mapping{
		{Window: 0, Space: 0, Start: 0x400 * ps, End: 0x404 * ps, Perms: "rw-p", Path: "[heap]"},
		{Window: 0, Space: 0, Start: 0x1000 * ps, End: 0x1002 * ps, Perms: "rw-p"},
		{Window: 0, Space: 1, Start: 0x400 * ps, End: 0x401 * ps, Perms: "rw-p", Path: "/usr/bin/my app"},
		// Mapped after scan 2: scan 3 sees it, at the end of window 2.
		{Window: 2, Space: 0, Start: 0x2000 * ps, End: 0x2001 * ps, Perms: "rw-p", Path: "[stack]"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sidecar (-want +got):\n%s\nlog:\n%s", d, log.String())
	}
}
