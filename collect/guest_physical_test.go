package collect

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mdk/internal/vmtest"
	"mdk/trace"

	"mdk/linux"
)

// shareProc is one process of the sharing workload.
type shareProc struct {
	pid               int
	shared, private   uint64 // first virtual page of each mapping
	sharedF, privateF map[uint64]bool
}

// framesOf reads the page frames of n pages from virtual page first of pid.
func framesOf(t *testing.T, pid int, first uint64, n int) map[uint64]bool {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n*8)
	if _, err := f.ReadAt(b, int64(first*8)); err != nil {
		t.Fatal(err)
	}
	out := map[uint64]bool{}
	for i := range n {
		e := binary.NativeEndian.Uint64(b[i*8:])
		if e&linux.PagemapPresent == 0 {
			t.Fatalf("pid %d page %#x not present", pid, first+uint64(i))
		}
		out[e&linux.PagemapPFNMask] = true
	}
	return out
}

var spacePID = regexp.MustCompile(` (\d+)=(\d+)`)

// TestGuestPhysical: a parent and two children in one cgroup map the same
// 300 pages (a memfd, MAP_SHARED) and 200 private pages each. Recorded
// with --pages virtual, the shared pages are 3 x 300 pages (one per
// process); with --pages physical, 300 page frames, each once. The private
// pages are 3 x 200 either way.
func TestGuestPhysical(t *testing.T) {
	guestKind(t, vmtest.Custom)
	mglruOff(t)
	const children, shared, private = 2, 300, 200
	cg := makeCgroup(t, "mdk-share")
	// The parent joins the cgroup before it starts its children.
	w := startWorkload(t, "-c", "echo $$ > "+cg+"/cgroup.procs && exec /work/mdk-workload share "+
		strconv.Itoa(children)+" "+strconv.Itoa(shared)+" "+strconv.Itoa(private)+" 200ms /tmp")
	var procs []*shareProc
	for _, f := range w.ready {
		p := strings.Split(f, ":")
		pid, _ := strconv.Atoi(p[0])
		sh, _ := strconv.ParseUint(p[1], 16, 64)
		pr, _ := strconv.ParseUint(p[2], 16, 64)
		procs = append(procs, &shareProc{pid: pid, shared: sh / 4096, private: pr / 4096})
	}
	if len(procs) != children+1 {
		t.Fatalf("ready line %v", w.ready)
	}
	dir := t.TempDir()
	record := func(pages string) (trace.Header, []trace.Page) {
		out := filepath.Join(dir, pages+".mdkt")
		startRecord(t, "--cgroup", cg, "--pages", pages, "--window", "1s", "--duration", "3s", "-o", out).wait(t)
		rd, c, err := trace.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := trace.ReadAll(rd); err != nil {
			t.Fatal(err)
		}
		return rd.Header(), rd.Pages()
	}
	vh, vpages := record("virtual")
	_, ppages := record("physical")
	sharedFrames := map[uint64]bool{}
	for _, p := range procs {
		p.sharedF = framesOf(t, p.pid, p.shared, shared)
		p.privateF = framesOf(t, p.pid, p.private, private)
		for f := range p.sharedF {
			sharedFrames[f] = true
		}
	}
	if len(sharedFrames) != shared {
		t.Fatalf("the processes map %d distinct frames for the %d shared pages", len(sharedFrames), shared)
	}
	// Virtual: spaces are pids (the header lists space=pid).
	bySpace := map[uint32]*shareProc{}
	for _, m := range spacePID.FindAllStringSubmatch(vh.Source, -1) {
		sp, _ := strconv.Atoi(m[1])
		pid, _ := strconv.Atoi(m[2])
		for _, p := range procs {
			if p.pid == pid {
				bySpace[uint32(sp)] = p
			}
		}
	}
	if len(bySpace) != len(procs) {
		t.Fatalf("spaces %v for pids of %v (source %q)", bySpace, w.ready, vh.Source)
	}
	vShared, vPrivate := 0, 0
	for _, pg := range vpages {
		p := bySpace[pg.Space]
		switch {
		case p == nil:
		case pg.Page >= p.shared && pg.Page < p.shared+shared:
			vShared++
		case pg.Page >= p.private && pg.Page < p.private+private:
			vPrivate++
		}
	}
	pShared, pPrivate := 0, 0
	for _, pg := range ppages {
		if pg.Space != 0 {
			continue
		}
		if sharedFrames[pg.Page] {
			pShared++
		}
		for _, p := range procs {
			if p.privateF[pg.Page] {
				pPrivate++
			}
		}
	}
	t.Logf("virtual: %d pages (%d shared-mapping pages, %d private); physical: %d frames (%d shared, %d private); difference %d, shared duplicates %d",
		len(vpages), vShared, vPrivate, len(ppages), pShared, pPrivate, len(vpages)-len(ppages), children*shared)
	if vShared != (children+1)*shared || pShared != shared {
		t.Errorf("shared pages: %d virtual, %d physical; want %d and %d", vShared, pShared, (children+1)*shared, shared)
	}
	if vPrivate != (children+1)*private || pPrivate != (children+1)*private {
		t.Errorf("private pages: %d virtual, %d physical; want %d both", vPrivate, pPrivate, (children+1)*private)
	}
}
