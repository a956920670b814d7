package collect

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"mdk/internal/vmtest"
	"mdk/trace"
)

// TestGuestRecordMaps: mdk record --pid on the custom kernel writes the
// target's mappings beside the trace (OUT.maps): the mappings workload's
// file mapping (its path, read-only shared, 5 pages from the file's 3rd)
// and its fenced anonymous mapping (7 pages, rw-p) are there at the
// addresses the workload printed, with their sizes and offsets, seen in
// window 0, and the trace's pages fall into them by trace.FromMappings:
// every page of each, touched before the recording, is one of its region.
func TestGuestRecordMaps(t *testing.T) {
	guestKind(t, vmtest.Custom)
	mglruOff(t)
	const filePages, offset, mapPages, anonPages = 12, 3, 5, 7
	file := filepath.Join(t.TempDir(), "mdk-maps.dat")
	w := startWorkload(t, "maps", file, strconv.Itoa(filePages), strconv.Itoa(offset), strconv.Itoa(mapPages), strconv.Itoa(anonPages))
	var fileStart, anonStart uint64
	if n, err := fmt.Sscanf(w.ready[0]+" "+w.ready[1], "%x %x", &fileStart, &anonStart); n != 2 {
		t.Fatalf("ready line %v: %v", w.ready, err)
	}
	out := filepath.Join(t.TempDir(), "maps.mdkt")
	startRecord(t, "--pid", strconv.Itoa(w.cmd.Process.Pid), "--window", "1s", "--duration", "3s", "-o", out).wait(t)
	ms, err := trace.ReadMapsFile(out + trace.MapsSuffix)
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Mapping{
		{Start: fileStart, End: fileStart + mapPages*4096, Perms: "r--s", Offset: offset * 4096, Path: file},
		{Start: anonStart, End: anonStart + anonPages*4096, Perms: "rw-p"},
	}
	rd, c, err := trace.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(rd)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	regions := trace.FromMappings(tr.Pages, int(tr.Header.PageSize), ms)
	for _, m := range want {
		i := -1
		for k, got := range ms {
			if got == m { // Window 0, Space 0: seen at the first scan
				i = k
			}
		}
		if i < 0 {
			t.Errorf("OUT.maps has no mapping %+v; it has %d:\n%+v", m, len(ms), ms)
			continue
		}
		inRegion := int64(0)
		for id, p := range tr.Pages {
			if p.Page*4096 >= m.Start && p.Page*4096 < m.End {
				if regions.Label(regions.Of(uint32(id))) != m.Label() {
					t.Errorf("page %#x of %s is in region %s", p.Page*4096, m.Label(), regions.Label(regions.Of(uint32(id))))
				}
				inRegion++
			}
		}
		if n := (m.End - m.Start) / 4096; inRegion != int64(n) {
			t.Errorf("%s: %d of its %d pages in the trace, want all (each was touched)", m.Label(), inRegion, n)
		}
	}
	t.Logf("%d mappings recorded; %s and %s found", len(ms), want[0].Label(), want[1].Label())
}
