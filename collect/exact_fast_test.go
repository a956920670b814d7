package collect

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/trace"
)

// TestTracersAgree traces the same runs with mdk's page tool and with
// lackey and checks that the traces are identical, window by window: the
// phases program (with its store across two pages) and gzip.
func TestTracersAgree(t *testing.T) {
	requireValgrind(t)
	gz := testutil.RequireTool(t, "gzip")
	phases := buildPhases(t)
	in := filepath.Join(t.TempDir(), "in.txt")
	var data bytes.Buffer
	for i := 0; data.Len() < 24<<10; i++ {
		fmt.Fprintf(&data, "line %d: the quick brown fox %d jumps over the lazy dog\n", i, i*i%977)
	}
	os.WriteFile(in, data.Bytes(), 0o644)
	for _, c := range []struct {
		name   string
		window int64
		argv   []string
	}{
		{"phases", 30000, []string{phases}},
		{"phases-3", 3, []string{phases}},
		{"gzip", 100_000, []string{gz, "-c", in}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.window < 10 && testing.Short() {
				t.Skip("windows of a few instructions are slow under lackey")
			}
			fast, fres, fout := runExactMem(t, TracerPages, c.window, c.argv...)
			slow, sres, sout := runExactMem(t, TracerLackey, c.window, c.argv...)
			if fout != sout {
				t.Errorf("program output differs: %d bytes under the page tool, %d under lackey", len(fout), len(sout))
			}
			if fres.Windows != sres.Windows || fres.ExitCode != sres.ExitCode || fres.Windows != len(fast.Windows) {
				t.Errorf("results differ: page tool %+v, lackey %+v", fres, sres)
			}
			if fres.Instructions < int64(fres.Windows-1)*c.window || fres.Instructions > int64(fres.Windows)*c.window {
				t.Errorf("%d instructions in %d windows of %d", fres.Instructions, fres.Windows, c.window)
			}
			if fast.Header.PageSize != slow.Header.PageSize || fast.Header.Window != slow.Header.Window || fast.Header.Windows != slow.Header.Windows {
				t.Errorf("headers differ: %+v and %+v", fast.Header, slow.Header)
			}
			if d := cmp.Diff(slow.Pages, fast.Pages); d != "" {
				t.Errorf("pages (-lackey +page tool):\n%s", d)
			}
			if d := cmp.Diff(slow.Windows, fast.Windows); d != "" {
				t.Errorf("windows (-lackey +page tool):\n%s", d)
			}
		})
	}
}

// TestRunExactFallback breaks the page tool's build (a C compiler that
// fails) and checks that the automatic choice falls back to lackey, saying
// why, while an explicit --tracer pages fails with the compiler's error.
func TestRunExactFallback(t *testing.T) {
	requireValgrind(t)
	sh := testutil.RequireTool(t, "sh")
	t.Setenv("MDK_CACHE_DIR", t.TempDir())
	t.Setenv("CC", "false")
	var log bytes.Buffer
	var tr *trace.Trace
	res, err := RunExact(context.Background(), ExactOptions{WindowInstructions: 1 << 20, Log: &log},
		[]string{sh, "-c", "exit 0"}, func(h trace.Header) (trace.Writer, error) { return newMemWriter(h, &tr), nil })
	if err != nil || res.Tracer != TracerLackey || res.Windows == 0 {
		t.Errorf("auto with a broken compiler: %+v, %v; want a lackey trace", res, err)
	}
	if !strings.Contains(log.String(), "falling back to valgrind's lackey") || !strings.Contains(log.String(), "building mdk's valgrind tool") {
		t.Errorf("message %q does not say it fell back, and why", log.String())
	}
	_, err = RunExact(context.Background(), ExactOptions{Tracer: TracerPages, WindowInstructions: 1 << 20},
		[]string{sh, "-c", "exit 0"}, func(h trace.Header) (trace.Writer, error) { return newMemWriter(h, &tr), nil })
	if err == nil || !strings.Contains(err.Error(), "building mdk's valgrind tool") {
		t.Errorf("--tracer pages with a broken compiler: %v", err)
	}
	_, err = RunExact(context.Background(), ExactOptions{Tracer: "qemu", WindowInstructions: 1},
		[]string{sh}, func(h trace.Header) (trace.Writer, error) { return newMemWriter(h, &tr), nil })
	if err == nil || !strings.Contains(err.Error(), `unknown tracer "qemu"`) {
		t.Errorf("unknown tracer: %v", err)
	}
}

// TestBuildPageToolCached builds the tool into an empty cache, then checks
// that a second call reuses the build instead of building again.
func TestBuildPageToolCached(t *testing.T) {
	requireValgrind(t)
	testutil.RequireTool(t, "gcc")
	t.Setenv("MDK_CACHE_DIR", t.TempDir())
	dir, err := BuildPageTool("")
	if err != nil {
		t.Fatal(err)
	}
	plat, _, _ := valgrindPlatform()
	tool := filepath.Join(dir, PageToolName+"-"+plat)
	st, err := os.Stat(tool)
	if err != nil {
		t.Fatal(err)
	}
	// A compiler that cannot run would fail a second build.
	t.Setenv("CC", "false")
	if _, err := BuildPageTool(""); err == nil {
		t.Fatal("a changed compiler must change the key (and fail here)")
	}
	t.Setenv("CC", "")
	dir2, err := BuildPageTool("")
	if err != nil || dir2 != dir {
		t.Fatalf("second build: %q, %v; want the cached %q", dir2, err, dir)
	}
	st2, _ := os.Stat(tool)
	if !st2.ModTime().Equal(st.ModTime()) {
		t.Error("the cached tool was rebuilt")
	}
	ents, _ := os.ReadDir(filepath.Dir(dir))
	if len(ents) != 1 {
		t.Errorf("cache holds %d entries, want 1 (temporary build directories left behind?)", len(ents))
	}
}

// pageStream encodes a page tool stream: windows of (instructions, pages),
// and the end record if end.
func pageStream(window uint64, wins [][]uint64, end bool) []byte {
	var b []byte
	put := func(v uint64) { b = binary.NativeEndian.AppendUint64(b, v) }
	b = append(b, pageToolMagic...)
	put(4096)
	put(window)
	var total uint64
	for _, w := range wins {
		put(uint64(len(w) - 1))
		put(w[0])
		total += w[0]
		for _, p := range w[1:] {
			put(p)
		}
	}
	if end {
		put(pageToolEnd)
		put(total)
	}
	return b
}

func TestPageToolReader(t *testing.T) {
	stream := pageStream(10, [][]uint64{{10, 7, 3}, {10, 3, 9}, {4, 1}}, true)
	pr, err := NewPageToolReader(bytes.NewReader(stream), "s", 10)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	want := []trace.Window{
		{Index: 0, New: []trace.Page{{Page: 7}, {Page: 3}}, Accessed: []uint32{0, 1}},
		{Index: 1, New: []trace.Page{{Page: 9}}, Accessed: []uint32{1, 2}},
		{Index: 2, New: []trace.Page{{Page: 1}}, Accessed: []uint32{3}},
	}
	opt := cmp.Options{cmp.Comparer(func(a, b []uint32) bool { return fmt.Sprint(a) == fmt.Sprint(b) }),
		cmp.Comparer(func(a, b []trace.Page) bool { return fmt.Sprint(a) == fmt.Sprint(b) })}
	if d := cmp.Diff(want, tr.Windows, opt); d != "" {
		t.Errorf("windows (-want +got):\n%s", d)
	}
	if !pr.Complete() || pr.Instructions() != 24 || tr.Header.PageSize != 4096 || tr.Header.Window != 10 {
		t.Errorf("complete %v, %d instructions, header %+v", pr.Complete(), pr.Instructions(), tr.Header)
	}

	// Cut short between two windows: the windows so far, not complete.
	cut := pageStream(10, [][]uint64{{10, 7, 3}}, false)
	pr, err = NewPageToolReader(bytes.NewReader(cut), "s", 10)
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := trace.ReadAll(pr); err != nil || len(tr.Windows) != 1 || pr.Complete() {
		t.Errorf("cut stream: %v, complete %v", err, pr.Complete())
	}

	// An empty stream is io.EOF: the tool never started.
	if _, err := NewPageToolReader(bytes.NewReader(nil), "s", 10); !errors.Is(err, io.EOF) {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
}

func TestPageToolReaderErrors(t *testing.T) {
	good := pageStream(10, [][]uint64{{10, 7, 3}, {2, 3}}, true)
	for _, c := range []struct {
		name   string
		stream []byte
		window int64
		want   string
	}{
		{"magic", append([]byte("MDKPGS02"), good[8:]...), 10, "not mdkpages output"},
		{"window", good, 20, "window of 10 instructions, want 20"},
		{"page size", pageStreamPageSize(good, 8192), 10, "page size 8192"},
		{"header cut", good[:12], 10, "reading the page size"},
		{"window cut", good[:len(good)-20], 10, "reading a page"},
		{"end cut", good[:len(good)-4], 10, "total instruction count"},
		{"twice", pageStream(10, [][]uint64{{10, 7, 7}}, true), 10, "page 0x7 twice in window 0"},
		{"after short", pageStream(10, [][]uint64{{3, 7}, {10, 8}}, true), 10, "follows one of fewer than 10"},
		{"too many instrs", pageStream(10, [][]uint64{{11, 7}}, true), 10, "window of 11 instructions"},
		{"no instrs", pageStream(10, [][]uint64{{0, 7}}, true), 10, "window of 0 instructions"},
		{"no pages", pageStream(10, [][]uint64{{10}}, true), 10, "window with no pages"},
		{"total", append(append([]byte{}, good[:len(good)-8]...), binary.NativeEndian.AppendUint64(nil, 13)...), 10, "end record counts 13 instructions, the windows 12"},
		{"trailing", append(append([]byte{}, good...), 0), 10, "data after the end record"},
		{"huge page", pageStream(10, [][]uint64{{1, 1 << 60}}, true), 10, "beyond a 64-bit address space"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, err := NewPageToolReader(bytes.NewReader(c.stream), "out.bin", c.window)
			if err == nil {
				_, err = trace.ReadAll(pr)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "out.bin: byte ") {
				t.Errorf("got %v, want an error at a byte offset of out.bin saying %q", err, c.want)
			}
		})
	}
}

func pageStreamPageSize(s []byte, size uint64) []byte {
	out := append([]byte{}, s...)
	binary.NativeEndian.PutUint64(out[8:], size)
	return out
}

// FuzzPageToolReader: any stream reads to a trace or fails with an error
// naming a byte offset; no panic, and memory bounded by the stream.
func FuzzPageToolReader(f *testing.F) {
	f.Add(pageStream(10, [][]uint64{{10, 7, 3}, {10, 3, 9}, {4, 1}}, true))
	f.Add(pageStream(10, [][]uint64{{10, 7, 3}}, false))
	f.Add(pageStream(1, [][]uint64{{1, 1 << 40}, {1, 0}}, true))
	f.Fuzz(func(t *testing.T, b []byte) {
		pr, err := NewPageToolReader(bytes.NewReader(b), "f", 10)
		if err != nil {
			if !errors.Is(err, io.EOF) && !strings.HasPrefix(err.Error(), "f: byte ") {
				t.Fatalf("header error without offset: %v", err)
			}
			return
		}
		tr, err := trace.ReadAll(pr)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f: byte ") {
				t.Fatalf("error without offset: %v", err)
			}
			return
		}
		if len(tr.Pages) > len(b)/8 {
			t.Fatalf("%d pages from %d bytes", len(tr.Pages), len(b))
		}
	})
}

// forkC forks a child that writes pages 8-15 of a buffer and exits without
// exec'ing (so it still runs under valgrind); the parent writes pages 0-1
// after the child has ended.
const forkC = `
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
static char buf[16 * 4096] __attribute__((aligned(4096)));
int main(void) {
	printf("%p\n", (void *)buf);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (int p = 8; p < 16; p++) buf[p * 4096] = 1;
		_exit(0);
	}
	waitpid(pid, 0, 0);
	buf[0] = 1;
	buf[4096] = 1;
	return 0;
}
`

// TestPageToolFork checks that only the process mdk started is traced by
// the page tool: a forked child's accesses do not reach the trace (nor
// corrupt its stream).
func TestPageToolFork(t *testing.T) {
	requireValgrind(t)
	gcc := testutil.RequireTool(t, "gcc")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "fork.c"), filepath.Join(dir, "fork")
	os.WriteFile(src, []byte(forkC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	tr, res, stdout := runExactMem(t, TracerPages, 100_000, bin)
	base, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(stdout), "0x"), 16, 64)
	if err != nil {
		t.Fatalf("program output %q: %v", stdout, err)
	}
	first := base / 4096
	var got []uint64
	for _, p := range tr.Pages {
		if p.Page >= first && p.Page < first+16 {
			got = append(got, p.Page-first)
		}
	}
	if d := cmp.Diff([]uint64{0, 1}, got); d != "" || res.ExitCode != 0 {
		t.Errorf("buffer pages in the trace (-want +got):\n%s(result %+v)", d, res)
	}
}
