package testutil

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"mdk/trace"
)

// SpecRow is one row of SPEC section 4's worked example table.
type SpecRow struct {
	Spec       string
	Promotions []int64 // per window 0..9
	MaxPR      float64
	Saved      int64 // S
}

// SpecAccessed is |A_w| of the worked example; SpecAlive is its L.
var (
	SpecAccessed       = []int64{3, 2, 2, 2, 1, 2, 1, 2, 1, 2}
	SpecAlive    int64 = 51
)

// SpecTable is SPEC section 4's table, row by row, for the trace in
// testdata/example.txt at the repository root.
var SpecTable = []SpecRow{
	{"age:A=1", []int64{0, 0, 1, 0, 0, 1, 0, 1, 0, 1}, 0.5, 24},
	{"age:A=2", []int64{0, 0, 0, 0, 0, 1, 0, 1, 0, 1}, 0.5, 17},
	{"age:A=3", []int64{0, 0, 0, 0, 0, 1, 0, 1, 0, 1}, 0.5, 11},
	{"vmin:T=0", []int64{0, 0, 1, 0, 0, 1, 0, 1, 0, 1}, 0.5, 32},
	{"vmin:T=2", []int64{0, 0, 0, 0, 0, 1, 0, 1, 0, 1}, 0.5, 29},
	{"opp:r=25%", []int64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 18},
	{"opp:r=50%", []int64{0, 0, 1, 0, 0, 1, 0, 1, 0, 1}, 0.5, 32},
	{"paw:P=2,wait=1", []int64{0, 0, 1, 0, 0, 1, 0, 0, 0, 1}, 0.5, 21},
	{"paw:P=4,wait=0", []int64{0, 1, 1, 0, 0, 1, 0, 0, 0, 1}, 0.5, 28},
	{"pace:P=3,A=2", []int64{0, 1, 1, 0, 0, 1, 0, 1, 0, 1}, 0.5, 30},
	{"pace:P=inf,A=2", []int64{0, 0, 0, 0, 0, 1, 0, 1, 0, 1}, 0.5, 17},
}

// ReadTextTrace reads a text trace file into memory, failing the test on
// any error.
func ReadTextTrace(t testing.TB, path string) *trace.Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := trace.NewTextReader(f, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// ReadTraceFile reads a trace file of any format (trace.Open) into memory,
// failing the test on any error.
func ReadTraceFile(t testing.TB, path string) *trace.Trace {
	t.Helper()
	r, c, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// EncodeBinary returns tr in the binary format (docs/trace-format.md).
func EncodeBinary(t testing.TB, tr *trace.Trace) []byte {
	t.Helper()
	return encode(t, tr, trace.NewBinaryWriter)
}

// EncodeText returns tr in the text format (SPEC section 3).
func EncodeText(t testing.TB, tr *trace.Trace) []byte {
	t.Helper()
	return encode(t, tr, trace.NewTextWriter)
}

func encode(t testing.TB, tr *trace.Trace, newWriter func(io.Writer, trace.Header) (trace.Writer, error)) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := newWriter(&buf, tr.Header)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trace.Copy(w, tr.NewReader()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
