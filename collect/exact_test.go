package collect

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/trace"
)

// phases.c touches pages of a page-aligned buffer in known phases. Between
// phases it spins in a register-only loop (only instruction fetches of its
// own code page), long enough to span several windows, so each phase's data
// accesses form a burst of windows apart from the others.
const phasesC = `
#include <stdio.h>
#include <stdint.h>
static char buf[16 * 4096] __attribute__((aligned(4096)));
static void spin(void) {
	for (long i = 0; i < 100000; i++) __asm__ volatile("" : : : "memory");
}
static void touch(int p) { *(volatile char *)(buf + p * 4096 + 100) = 1; }
int main(void) {
	printf("%p\n", (void *)buf);
	fflush(stdout);
	spin();
	touch(0); touch(1); touch(2);
	spin();
	touch(5);
	spin();
	touch(1); touch(7); touch(9);
	spin();
	touch(3); touch(4);
	spin();
	/* one 8-byte store across the boundary of pages 10 and 11 */
	*(volatile uint64_t *)(buf + 11 * 4096 - 4) = 1;
	spin();
	return 0;
}
`

// TestRunExactPhases traces phases.c under each tracer and checks that the
// buffer's pages appear in exactly the bursts the program makes, and in no
// other window.
func TestRunExactPhases(t *testing.T) {
	requireValgrind(t)
	bin := buildPhases(t)
	for _, tracer := range []string{TracerPages, TracerLackey} {
		t.Run(tracer, func(t *testing.T) {
			tr, res, stdout := runExactMem(t, tracer, 30000, bin)
			base, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(stdout), "0x"), 16, 64)
			if err != nil {
				t.Fatalf("program output %q: %v", stdout, err)
			}
			first := base / 4096
			// Bursts: maximal runs of windows touching the buffer; their unions.
			var bursts [][]uint64
			in := false
			for _, w := range tr.Windows {
				var set []uint64
				for _, id := range w.Accessed {
					if p := tr.Pages[id].Page; p >= first && p < first+16 {
						set = append(set, p-first)
					}
				}
				if len(set) == 0 {
					in = false
					continue
				}
				if !in {
					bursts = append(bursts, nil)
					in = true
				}
				b := &bursts[len(bursts)-1]
				*b = union(*b, set)
			}
			want := [][]uint64{{0, 1, 2}, {5}, {1, 7, 9}, {3, 4}, {10, 11}}
			if d := cmp.Diff(want, bursts); d != "" {
				t.Errorf("bursts of buffer pages (-want +got):\n%s", d)
			}
			// 6 spins of 100000 iterations are over 600000 instructions.
			if res.Windows < 20 || res.Windows != len(tr.Windows) || res.ExitCode != 0 || res.Tracer != tracer {
				t.Errorf("result %+v, %d windows written", res, len(tr.Windows))
			}
		})
	}
}

// buildPhases compiles phases.c into the test's temporary directory.
func buildPhases(t *testing.T) string {
	t.Helper()
	gcc := testutil.RequireTool(t, "gcc")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "phases.c"), filepath.Join(dir, "phases")
	os.WriteFile(src, []byte(phasesC), 0o644)
	if out, err := exec.Command(gcc, "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// runExactMem traces argv with tracer into memory; it returns the trace,
// the result and the program's standard output.
func runExactMem(t *testing.T, tracer string, window int64, argv ...string) (*trace.Trace, ExactResult, string) {
	t.Helper()
	var stdout bytes.Buffer
	var tr *trace.Trace
	res, err := RunExact(context.Background(), ExactOptions{Tracer: tracer, WindowInstructions: window, Stdout: &stdout, Stderr: os.Stderr},
		argv, func(h trace.Header) (trace.Writer, error) { return newMemWriter(h, &tr), nil })
	if err != nil {
		t.Fatalf("%s: %v", tracer, err)
	}
	return tr, res, stdout.String()
}

func union(a, b []uint64) []uint64 {
	m := map[uint64]bool{}
	for _, x := range append(append([]uint64(nil), a...), b...) {
		m[x] = true
	}
	var out []uint64
	for x := range m {
		out = append(out, x)
	}
	slices.Sort(out)
	return out
}

// TestRunExactGzip traces a real program on a scripted workload: gzip
// compressing a 32 KiB file to a trace file on disk.
func TestRunExactGzip(t *testing.T) {
	requireValgrind(t)
	gz := testutil.RequireTool(t, "gzip")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	var data bytes.Buffer
	for i := 0; data.Len() < 32<<10; i++ {
		fmt.Fprintf(&data, "line %d: the quick brown fox %d jumps over the lazy dog\n", i, i*i%977)
	}
	os.WriteFile(in, data.Bytes(), 0o644)
	out := filepath.Join(dir, "gzip.mdkt")
	var compressed bytes.Buffer
	res, err := RunExactFile(context.Background(), ExactOptions{WindowInstructions: 200_000, Stdout: &compressed, Stderr: os.Stderr},
		[]string{gz, "-c", in}, out)
	if err != nil {
		t.Fatal(err)
	}
	if compressed.Len() < 100 || compressed.Len() > data.Len() {
		t.Errorf("gzip wrote %d bytes for %d: the program's stdout did not pass through", compressed.Len(), data.Len())
	}
	tr := testutil.ReadTraceFile(t, out)
	// gzip reads the 8-page input and keeps a 32 KiB window plus hash
	// tables: well over 100 distinct pages, and several million instructions.
	if len(tr.Windows) < 3 || len(tr.Pages) < 100 || len(tr.Windows) != res.Windows {
		t.Errorf("%d windows, %d pages (result %+v)", len(tr.Windows), len(tr.Pages), res)
	}
	if !strings.Contains(tr.Header.Source, "200000 instructions") {
		t.Errorf("source %q", tr.Header.Source)
	}
}

func TestRunExactExitCode(t *testing.T) {
	requireValgrind(t)
	sh := testutil.RequireTool(t, "sh")
	var tr *trace.Trace
	res, err := RunExact(context.Background(), ExactOptions{WindowInstructions: 1 << 20},
		[]string{sh, "-c", "exit 3"}, func(h trace.Header) (trace.Writer, error) { return newMemWriter(h, &tr), nil })
	if err != nil || res.ExitCode != 3 || res.Windows == 0 {
		t.Errorf("got %+v, %v; want exit code 3 and a trace", res, err)
	}
}

// memWriter collects windows into a Trace.
type memWriter struct {
	t   *trace.Trace
	dst **trace.Trace
}

func newMemWriter(h trace.Header, dst **trace.Trace) *memWriter {
	return &memWriter{t: &trace.Trace{Header: h}, dst: dst}
}

func (m *memWriter) WriteWindow(w *trace.Window) error {
	m.t.Pages = append(m.t.Pages, w.New...)
	m.t.Windows = append(m.t.Windows, w.Clone())
	return nil
}

func (m *memWriter) Close() error {
	m.t.Header.Windows = len(m.t.Windows)
	*m.dst = m.t
	return nil
}
