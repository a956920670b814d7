package collect

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"

	"mdk/linux"
)

// share maps pid's page vpn to the frame of from's page fromVPN (shared
// memory, or copy-on-write after fork before either writes).
func (k *fakeKernel) share(pid int, vpn uint64, from int, fromVPN uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.procs[pid].pme[vpn] = k.procs[from].pme[fromVPN]
	k.sync(pid)
}

// TestRecorderPhysical: with PagesPhysical a frame that two processes map
// is one page, accessed when either touches it; private frames are pages
// of their own; a swapped-out page is a swap-entry page (space 1).
func TestRecorderPhysical(t *testing.T) {
	k := newFakeKernel(t, 1<<20)
	k.spawn(100)
	k.mmap(100, 0x400, 3, "", 0x400, 0x401, 0x402)
	k.spawn(200)
	k.mmap(200, 0x800, 2, "", 0x800)
	k.share(200, 0x801, 100, 0x400) // 200's 0x801 is 100's 0x400
	frame := func(pid int, vpn uint64) uint64 { return k.procs[pid].pme[vpn] & linux.PagemapPFNMask }
	shared, p401, p402, p800 := frame(100, 0x400), frame(100, 0x401), frame(100, 0x402), frame(200, 0x800)
	script := []func(){
		0: func() { k.touch(200, 0x801) }, // the shared frame, through 200
		1: func() { k.touch(100, 0x401); k.swapOut(100, 0x402) },
		2: func() {},
	}
	r, err := NewRecorder(Options{FS: k.FS(), PIDs: []int{100, 200}, Window: 20 * time.Millisecond, Duration: 60 * time.Millisecond,
		Pages: PagesPhysical, AfterScan: func(scan int) {
			if scan < len(script) {
				script[scan]()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(t.TempDir(), "p.mdkt")
	if _, err := r.RecordFile(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	tr := testutil.ReadTraceFile(t, out)
	swapEntry := k.procs[100].pme[0x402] & linux.PagemapPFNMask
	want := [][]string{
		0: cat(ev("b", 0, shared, p401, p402, p800), ev("a", 0, shared)),
		1: cat(ev("a", 0, p401), ev("f", 0, p402), ev("b", 1, swapEntry)),
		2: nil,
	}
	if d := cmp.Diff(want, events(tr)); d != "" {
		t.Errorf("trace (-want +got):\n%s", d)
	}
	if len(tr.Pages) != 5 { // 4 frames and a swap entry: 5 virtual pages share one frame
		t.Errorf("%d pages, want 5", len(tr.Pages))
	}
}
