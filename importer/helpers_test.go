package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"mdk/trace"
)

// memWriter is a trace.Writer that keeps the trace in memory and checks the
// Window contract of trace/trace.go independently of the Windower: indices
// consecutive from 0, each New page never seen before, IDs in each list
// distinct and announced.
type memWriter struct {
	t      trace.Trace
	seen   map[trace.Page]bool
	closed bool
	mark   []int // mark[id] == stamp: id already seen in the list being checked
	stamp  int
}

func newMemWriter(h trace.Header) *memWriter {
	return &memWriter{t: trace.Trace{Header: h}, seen: map[trace.Page]bool{}}
}

func (m *memWriter) WriteWindow(w *trace.Window) error {
	if m.closed {
		return errors.New("write after close")
	}
	if w.Index != len(m.t.Windows) {
		return fmt.Errorf("window index %d, want %d", w.Index, len(m.t.Windows))
	}
	for _, p := range w.New {
		if m.seen[p] {
			return fmt.Errorf("window %d announces page %v again", w.Index, p)
		}
		m.seen[p] = true
		m.t.Pages = append(m.t.Pages, p)
	}
	for len(m.mark) < len(m.t.Pages) {
		m.mark = append(m.mark, 0)
	}
	for _, list := range [][]uint32{w.Accessed, w.Born, w.Freed} {
		m.stamp++
		for _, id := range list {
			if int(id) >= len(m.t.Pages) {
				return fmt.Errorf("window %d uses unannounced id %d", w.Index, id)
			}
			if m.mark[id] == m.stamp {
				return fmt.Errorf("window %d lists id %d twice", w.Index, id)
			}
			m.mark[id] = m.stamp
		}
	}
	m.t.Windows = append(m.t.Windows, w.Clone())
	return nil
}

func (m *memWriter) Close() error {
	m.closed = true
	m.t.Header.Windows = len(m.t.Windows)
	return nil
}

// importBytes imports data in format into memory.
func importBytes(t testing.TB, format string, data []byte, name string, o Options) (*trace.Trace, Stats, error) {
	t.Helper()
	var mw *memWriter
	st, err := Import(context.Background(), format, bytes.NewReader(data), name, o, func(h trace.Header) (trace.Writer, error) {
		mw = newMemWriter(h)
		return mw, nil
	})
	if mw == nil {
		return nil, st, err
	}
	return &mw.t, st, err
}

// importFile imports testdata/name and fails the test on error.
func importFile(t testing.TB, format, name string, o Options) (*trace.Trace, Stats) {
	t.Helper()
	tr, st, err := importBytes(t, format, readTestdata(t, name), name, o)
	if err != nil {
		t.Fatal(err)
	}
	return tr, st
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// windowSizes returns min, mean and max of |A_w| over windows.
func windowSizes(tr *trace.Trace) (lo int, mean float64, hi int) {
	lo = -1
	sum := 0
	for _, w := range tr.Windows {
		n := len(w.Accessed)
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
		sum += n
	}
	if len(tr.Windows) > 0 {
		mean = float64(sum) / float64(len(tr.Windows))
	}
	return lo, mean, hi
}

// accessSets returns each window's accessed pages as a set.
func accessSets(tr *trace.Trace) []map[trace.Page]bool {
	var out []map[trace.Page]bool
	for _, w := range tr.Windows {
		s := map[trace.Page]bool{}
		for _, id := range w.Accessed {
			s[tr.Pages[id]] = true
		}
		out = append(out, s)
	}
	return out
}
