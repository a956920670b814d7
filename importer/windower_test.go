package importer

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/trace"
)

func TestWindower(t *testing.T) {
	mw := newMemWriter(trace.DefaultHeader())
	x := NewWindower(mw, 0)
	p := func(n uint64) trace.Page { return trace.Page{Page: n} }
	steps := []struct {
		w    int64
		page trace.Page
	}{
		{0, p(7)}, {0, p(3)}, {0, p(7)}, // duplicate within a window
		{2, p(3)}, {2, trace.Page{Space: 1, Page: 7}}, // window 1 empty; other space
		{2, p(9)},
		{4, p(7)},
	}
	for _, s := range steps {
		if err := x.Access(s.w, s.page); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Access(3, p(1)); !errors.Is(err, ErrBackwards) {
		t.Errorf("access to an earlier window: got %v, want ErrBackwards", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	want := []trace.Window{
		{Index: 0, New: []trace.Page{p(7), p(3)}, Accessed: []uint32{0, 1}},
		{Index: 1},
		{Index: 2, New: []trace.Page{{Space: 1, Page: 7}, p(9)}, Accessed: []uint32{1, 2, 3}},
		{Index: 3},
		{Index: 4, Accessed: []uint32{0}},
	}
	if d := cmp.Diff(want, mw.t.Windows, cmp.Comparer(func(a, b []uint32) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) }),
		cmp.Comparer(func(a, b []trace.Page) bool { return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b)) })); d != "" {
		t.Errorf("windows (-want +got):\n%s", d)
	}
	if x.Pages() != 4 || x.Accesses() != 7 || x.Windows() != 5 {
		t.Errorf("pages %d accesses %d windows %d, want 4 7 5", x.Pages(), x.Accesses(), x.Windows())
	}
}

func TestWindowerLimits(t *testing.T) {
	x := NewWindower(newMemWriter(trace.DefaultHeader()), 10)
	if err := x.Access(10, trace.Page{}); !errors.Is(err, ErrTooManyWindows) {
		t.Errorf("window 10 of 10: got %v, want ErrTooManyWindows", err)
	}
	if err := x.AccessRange(9, 0, 1<<64-2, 1<<64-1); err != nil {
		t.Errorf("range at the top of the page space: %v", err)
	}
	if x.Pages() != 2 {
		t.Errorf("pages %d, want 2", x.Pages())
	}
}

// An empty input gives an empty trace, not an error.
func TestEmptyInput(t *testing.T) {
	tr, st, err := importBytes(t, "oracle-general", nil, "empty.bin", Options{})
	if err != nil || len(tr.Windows) != 0 || st.Records != 0 {
		t.Errorf("got %d windows, %+v, %v; want an empty trace", len(tr.Windows), st, err)
	}
}

// The hot path does not allocate once pages and windows are known.
func TestWindowerAllocs(t *testing.T) {
	x := NewWindower(discardWriter{}, 0)
	for p := uint64(0); p < 1000; p++ {
		if err := x.Access(0, trace.Page{Page: p}); err != nil {
			t.Fatal(err)
		}
	}
	w := int64(0)
	allocs := testing.AllocsPerRun(100, func() {
		w++
		for p := uint64(0); p < 1000; p++ {
			if err := x.Access(w, trace.Page{Page: p}); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per window of 1000 known pages, want 0", allocs)
	}
}
