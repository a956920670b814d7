package trace_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"mdk/internal/testutil"
	"mdk/trace"
)

// TestLookahead checks that the windows of trace.Lookahead stay intact
// until the second Read after them, for the readers that double-buffer
// themselves (binary, in memory) and for one whose windows are copied
// (text).
func TestLookahead(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 11))
	for n := 0; n < testutil.Count(200); n++ {
		tr := testutil.RandomTrace(rng)
		// The binary writer renumbers pages canonically; compare every
		// reader with its own windows, read without Lookahead.
		bin, txt := testutil.EncodeBinary(t, tr), testutil.EncodeText(t, tr)
		readers := map[string]func() trace.Reader{
			"memory": tr.NewReader,
			"binary": func() trace.Reader {
				r, err := trace.NewBinaryReader(bytes.NewReader(bin), "bin")
				if err != nil {
					t.Fatal(err)
				}
				return r
			},
			"text": func() trace.Reader {
				r, err := trace.NewTextReader(bytes.NewReader(txt), "txt")
				if err != nil {
					t.Fatal(err)
				}
				return r
			},
		}
		for name, open := range readers {
			want, err := trace.ReadAll(open())
			if err != nil {
				t.Fatal(err)
			}
			r := trace.Lookahead(open())
			var prev *trace.Window
			for i := 0; ; i++ {
				w, err := r.Read()
				if prev != nil {
					if d := cmp.Diff(want.Windows[i-1], *prev, cmpopts.EquateEmpty()); d != "" {
						t.Fatalf("trace %d, %s: window %d changed by the next Read (-want +got):\n%s", n, name, i-1, d)
					}
				}
				if err != nil {
					if i != len(want.Windows) {
						t.Fatalf("trace %d, %s: %v after %d windows, want %d", n, name, err, i, len(want.Windows))
					}
					break
				}
				prev = w
			}
		}
	}
}
