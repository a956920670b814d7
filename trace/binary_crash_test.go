package trace_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/trace"
)

// crashWindow is window w of the crash test's trace: 50 new pages, and a
// random set of the pages so far accessed, in canonical form.
func crashWindow(w int) trace.Window {
	rng := testutil.Rand(uint64(1000 + w))
	win := trace.Window{Index: w}
	for i := range 50 {
		win.New = append(win.New, trace.Page{Space: uint32(w % 3), Page: uint64(w*1000 + i)})
	}
	total := 50 * (w + 1)
	for id := range total {
		if rng.IntN(3) == 0 || id >= total-50 {
			win.Accessed = append(win.Accessed, uint32(id))
		}
	}
	slices.SortFunc(win.New, func(a, b trace.Page) int { return int(a.Page) - int(b.Page) })
	return win
}

const crashEnv = "MDK_TEST_CRASH_WRITER"

// TestBinaryCrashWriter is the writer process of TestBinaryCrashSafety: it
// writes windows slowly to $MDK_TEST_CRASH_WRITER and prints "done N" after
// each window's WriteWindow returned.
func TestBinaryCrashWriter(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process of TestBinaryCrashSafety")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.NewBinaryWriter(f, trace.Header{PageSize: 4096, Window: time.Second, Source: "crash test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10000 {
		win := crashWindow(i)
		if err := w.WriteWindow(&win); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("done %d\n", i)
		time.Sleep(time.Duration(i%4) * time.Millisecond)
	}
	t.Fatal("not killed")
}

// TestBinaryCrashSafety SIGKILLs a writer process mid-write and reads what
// it left: every window it reported complete is there and intact, and the
// missing end is reported as truncation at a byte offset.
func TestBinaryCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a subprocess")
	}
	rng := testutil.Rand(testutil.Seed(t, 5))
	for run := range 3 {
		path := filepath.Join(t.TempDir(), "crash.mdkt")
		cmd := exec.Command(os.Args[0], "-test.run=^TestBinaryCrashWriter$")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 5 + rng.IntN(40)
		reported := -1
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			n, ok := strings.CutPrefix(sc.Text(), "done ")
			if !ok {
				continue
			}
			reported, _ = strconv.Atoi(n)
			if reported >= killAfter {
				cmd.Process.Kill() // SIGKILL
				break
			}
		}
		io.Copy(io.Discard, out)
		cmd.Wait()
		if reported < killAfter {
			t.Fatalf("run %d: the writer reported only %d windows before exiting", run, reported+1)
		}

		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := f.Seek(0, io.SeekEnd)
		f.Seek(0, io.SeekStart)
		r, err := trace.NewBinaryReader(f, path)
		if err != nil {
			t.Fatal(err)
		}
		read := 0
		for {
			win, err := r.Read()
			if err != nil {
				var ce *trace.CorruptError
				if !errors.As(err, &ce) || !errors.Is(err, io.ErrUnexpectedEOF) || ce.Offset > size ||
					!strings.Contains(err.Error(), "byte offset "+strconv.FormatInt(ce.Offset, 10)) {
					t.Fatalf("run %d: error %v, want truncation at an offset <= %d", run, err, size)
				}
				if ce.LastWindow != read-1 {
					t.Fatalf("run %d: LastWindow %d after %d windows", run, ce.LastWindow, read)
				}
				break
			}
			if d := cmp.Diff(crashWindow(read), *win); d != "" {
				t.Fatalf("run %d: window %d differs (-want +got):\n%s", run, read, d)
			}
			read++
		}
		f.Close()
		if read <= reported {
			t.Fatalf("run %d: the writer reported %d windows done, the file holds %d", run, reported+1, read)
		}
		t.Logf("run %d: killed after %d reported windows; file of %d bytes holds %d", run, reported+1, size, read)
	}
}
