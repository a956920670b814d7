package trace_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"mdk/trace"
)

// TestWritersCheckAlike: both writers check the Window contract with one
// check, so a bad window gets the same message from each, but for the
// format's name.
func TestWritersCheckAlike(t *testing.T) {
	h := trace.Header{PageSize: 4096, Window: time.Second}
	p := []trace.Page{{Page: 1}, {Page: 2}}
	for _, tc := range []struct {
		name    string
		h       trace.Header
		windows []trace.Window
		want    string // after "trace: FORMAT writer: "
	}{
		{"page size", trace.Header{Window: time.Second}, nil, "page size 0 out of range 1.."},
		{"window length", trace.Header{PageSize: 1}, nil, "window length 0s is not positive"},
		{"window count", trace.Header{PageSize: 1, Window: 1, Windows: -1}, nil, "window count -1 out of range 0.."},
		{"index", h, []trace.Window{{Index: 1}}, "window 0: got window index 1, want 0"},
		{"beyond header", trace.Header{PageSize: 1, Window: 1, Windows: 1}, []trace.Window{{Index: 0}, {Index: 1}}, "window 1: beyond the 1 windows of the header"},
		{"unannounced", h, []trace.Window{{Index: 0, New: p[:1], Accessed: []uint32{0}, Freed: []uint32{1}}}, "window 0: f list has page ID 1, but only 1 pages were announced"},
		{"unannounced later", h, []trace.Window{{Index: 0, New: p[:1], Accessed: []uint32{0}}, {Index: 1, New: p[1:], Born: []uint32{1}, Accessed: []uint32{2}}}, "window 1: a list has page ID 2, but only 2 pages were announced"},
		{"listed twice", h, []trace.Window{{Index: 0, New: p, Born: []uint32{1, 0, 1}, Accessed: []uint32{0}}}, "window 0: b list has page 2 twice"},
		{"announced twice in a window", h, []trace.Window{{Index: 0, New: []trace.Page{p[0], p[1], p[0]}, Accessed: []uint32{0, 1}}}, "window 0: page 1 announced twice"},
		{"too few windows", trace.Header{PageSize: 1, Window: 1, Windows: 3}, []trace.Window{{Index: 0}}, "closed after 1 windows, but the header says 3"},
	} {
		for _, f := range []struct {
			name string
			new  func(io.Writer, trace.Header) (trace.Writer, error)
		}{{"text", trace.NewTextWriter}, {"binary", trace.NewBinaryWriter}} {
			w, err := f.new(io.Discard, tc.h)
			for i := 0; err == nil && i < len(tc.windows); i++ {
				err = w.WriteWindow(&tc.windows[i])
			}
			if err == nil {
				err = w.Close()
			}
			if want := "trace: " + f.name + " writer: " + tc.want; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s, %s writer: %v, want %s", tc.name, f.name, err, want)
			}
		}
	}
}
