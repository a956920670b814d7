package trace_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// textFuzzMaxWindows bounds the windows a fuzz input may make the reader yield
// (a single line `2000000000 a` makes two billion empty windows).
const textFuzzMaxWindows = 1 << 14

// textReadCapped reads data like ReadAll, keeping the header as the reader gave
// it. It returns nil, nil for inputs with too many windows.
func textReadCapped(data []byte, name string) (*trace.Trace, error) {
	r, err := trace.NewTextReader(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	if r.Header().Windows > textFuzzMaxWindows {
		return nil, nil
	}
	tr := &trace.Trace{Header: r.Header()}
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if w.Index >= textFuzzMaxWindows {
			return nil, nil
		}
		tr.Windows = append(tr.Windows, w.Clone())
	}
	tr.Pages = append([]trace.Page(nil), r.Pages()...)
	return tr, nil
}

// textCheckContract checks the trace.Reader guarantees on a whole trace.
func textCheckContract(t *testing.T, tr *trace.Trace) {
	t.Helper()
	seen := map[trace.Page]bool{}
	n := 0
	for i, w := range tr.Windows {
		if w.Index != i {
			t.Fatalf("window %d has Index %d", i, w.Index)
		}
		for _, p := range w.New {
			if seen[p] || tr.Pages[n] != p {
				t.Fatalf("window %d: page %v announced twice or out of order", i, p)
			}
			seen[p] = true
			n++
		}
		for k, list := range [][]uint32{w.Accessed, w.Born, w.Freed} {
			ids := map[uint32]bool{}
			for _, id := range list {
				if ids[id] || int(id) >= n {
					t.Fatalf("window %d kind %v: bad or repeated ID %d (%d pages)", i, trace.Kind(k), id, n)
				}
				ids[id] = true
			}
		}
	}
	if n != len(tr.Pages) {
		t.Fatalf("%d pages announced, page table has %d", n, len(tr.Pages))
	}
}

func FuzzTextReader(f *testing.F) {
	paths, _ := filepath.Glob("testdata/*.txt")
	for _, p := range append(paths, textExamplePath) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tc := range textErrorCases {
		if len(tc.in) < 1<<10 {
			f.Add([]byte(tc.in))
		}
	}
	rng := testutil.Rand(1)
	for range 20 {
		var buf bytes.Buffer
		tr := textRandomTrace(rng)
		w, err := trace.NewTextWriter(&buf, tr.Header)
		if err != nil {
			f.Fatal(err)
		}
		if _, err := trace.Copy(w, tr.NewReader()); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := textReadCapped(data, "fuzz.txt")
		if err != nil {
			var se *trace.SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error %q is not a *SyntaxError with a line", err)
			}
			return
		}
		if tr == nil {
			return
		}
		textCheckContract(t, tr)
		var buf bytes.Buffer
		w, err := trace.NewTextWriter(&buf, tr.Header)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := trace.Copy(w, tr.NewReader()); err != nil {
			t.Fatalf("write: %v", err)
		}
		got, err := textReadCapped(buf.Bytes(), "written.txt")
		if err != nil || got == nil {
			t.Fatalf("reading the written trace: %v\n%s", err, buf.Bytes())
		}
		tr.Header.Windows = len(tr.Windows)
		got.Header.Windows = len(got.Windows)
		textSameTrace(t, tr, got)
	})
}
