package agent

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"mdk/linux"
	"mdk/policy"
	"mdk/trace"
)

// selfTracker tracks pages of a buffer of this process: window 0 announces
// them all, every window accesses the first half. With snapshot it reads
// pagemap itself each window, as the live scanners do, and counts its
// reads.
type selfTracker struct {
	buf   []byte
	first uint64
	reads int
	pm    *linux.Pagemap
}

func (s *selfTracker) Header() trace.Header {
	return trace.Header{PageSize: linux.PageSize(), Window: time.Millisecond}
}
func (s *selfTracker) Targets() []int               { return []int{os.Getpid()} }
func (s *selfTracker) Future() *trace.Trace         { return nil }
func (s *selfTracker) Close() error                 { return s.pm.Close() }
func (s *selfTracker) Page(id uint32) (int, uint64) { return 0, s.first + uint64(id) }
func (s *selfTracker) pages() int                   { return len(s.buf) / linux.PageSize() }
func (s *selfTracker) Next(_ context.Context, k int) (*trace.Window, error) {
	w := &trace.Window{Index: k}
	for i := range s.pages() {
		if k == 0 {
			w.New = append(w.New, trace.Page{Page: s.first + uint64(i)})
			w.Born = append(w.Born, uint32(i))
		}
		if i < s.pages()/2 {
			s.buf[i*linux.PageSize()]++
			w.Accessed = append(w.Accessed, uint32(i))
		}
	}
	return w, nil
}

type snapshotTracker struct{ *selfTracker }

func (s snapshotTracker) Pagemap(entries []uint64, gone []bool) {
	s.reads++
	s.pm.Read(s.first, entries)
}

// TestOnePagemapReadPerWindow: with a tracker that read pagemap for the
// window ([Snapshot]), the measure stage reads none itself (measured.csv's
// pages_scanned is 0 in a dry run, which confirms nothing), the tracker's
// read is taken once per window, and the measurement is the same as with
// the agent's own read.
func TestOnePagemapReadPerWindow(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("process_madvise and pagemap PFNs need root")
	}
	ps := linux.PageSize()
	buf, err := syscall.Mmap(-1, 0, 64*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(buf)
	for i := 0; i < len(buf); i += ps {
		buf[i] = 1
	}
	first := uint64(uintptr(unsafe.Pointer(&buf[0]))) / uint64(ps)
	run := func(snapshot bool) ([]Row, int) {
		pm, err := linux.Default().OpenPagemap(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		st := &selfTracker{buf: buf, first: first, pm: pm}
		var tr Tracker = st
		if snapshot {
			tr = snapshotTracker{st}
		}
		opt := DefaultOptions
		opt.Setting, opt.Window, opt.Windows, opt.DryRun, opt.PSIThreshold = policy.AGE{A: 1}, time.Millisecond, 4, true, 0
		opt.Dir = filepath.Join(t.TempDir(), "run")
		if _, err := Run(context.Background(), tr, opt); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(opt.Dir, MeasuredFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := ReadMeasured(f, MeasuredFile)
		if err != nil {
			t.Fatal(err)
		}
		return rows, st.reads
	}
	own, _ := run(false)
	shared, reads := run(true)
	if reads != 4 || len(shared) != 4 || len(own) != 4 {
		t.Fatalf("%d tracker reads, %d and %d rows; want 4 each", reads, len(shared), len(own))
	}
	for w := range shared {
		if own[w].Scanned == 0 {
			t.Errorf("window %d: the agent's own measurement read no pagemap entry", w)
		}
		if shared[w].Scanned != 0 || shared[w].Syscalls != 0 {
			t.Errorf("window %d: %d entries read in %d calls beside the tracker's read; want none", w, shared[w].Scanned, shared[w].Syscalls)
		}
		if own[w].Alive != shared[w].Alive || own[w].Decided != shared[w].Decided || own[w].SkippedDry != shared[w].SkippedDry || own[w].KernelOut != shared[w].KernelOut {
			t.Errorf("window %d: measured %+v with the agent's read, %+v with the tracker's", w, own[w], shared[w])
		}
	}
}
