package gen_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/trace"
)

func small(model string, seed uint64) gen.Config {
	c := gen.DefaultConfig
	c.Model = model
	c.Pages = 3000
	c.Windows = 60
	c.Seed = seed
	return c
}

func generate(t testing.TB, c gen.Config) *trace.Trace {
	t.Helper()
	tr, err := trace.ReadAll(gen.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func binary(t testing.TB, c gen.Config) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewBinaryWriter(&buf, c.Header())
	if err != nil {
		t.Fatal(err)
	}
	if err := gen.Generate(c, w); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeterministic(t *testing.T) {
	for _, m := range gen.Models {
		t.Run(m, func(t *testing.T) {
			a, b := binary(t, small(m, 7)), binary(t, small(m, 7))
			if !bytes.Equal(a, b) {
				t.Fatal("same seed, different files")
			}
			if c := binary(t, small(m, 8)); bytes.Equal(a, c) {
				t.Fatal("different seeds, same file")
			}
		})
	}
}

// TestRoundTrip: a generated trace survives binary and text exactly, dense
// IDs included, because gen produces canonical windows.
func TestRoundTrip(t *testing.T) {
	for _, m := range gen.Models {
		t.Run(m, func(t *testing.T) {
			c := small(m, 1)
			want := generate(t, c)
			if want.Header != c.Header() || len(want.Windows) != c.Windows {
				t.Fatalf("header %+v, %d windows", want.Header, len(want.Windows))
			}
			bin := binary(t, c)
			r, err := trace.NewReaderAuto(bytes.NewReader(bin), m+".mdkt")
			if err != nil {
				t.Fatal(err)
			}
			got, err := trace.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("binary round trip (-want +got):\n%s", d)
			}
			// binary -> text -> binary is byte-identical, and the text
			// reads as the same trace.
			txt := testutil.EncodeText(t, got)
			tr, err := trace.NewReaderAuto(bytes.NewReader(txt), m+".txt")
			if err != nil {
				t.Fatal(err)
			}
			fromText, err := trace.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, fromText); d != "" {
				t.Fatalf("text round trip (-want +got):\n%s", d)
			}
			var again bytes.Buffer
			bw, err := trace.NewBinaryWriter(&again, fromText.Header)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := trace.Copy(bw, fromText.NewReader()); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bin, again.Bytes()) {
				t.Fatal("binary -> text -> binary is not byte-identical")
			}
		})
	}
}

// pageRate returns, per (space, page), the fraction of windows in which the
// page was accessed.
func pageRate(tr *trace.Trace) map[trace.Page]float64 {
	rate := map[trace.Page]float64{}
	for _, w := range tr.Windows {
		for _, id := range w.Accessed {
			rate[tr.Pages[id]] += 1 / float64(len(tr.Windows))
		}
	}
	return rate
}

func accesses(tr *trace.Trace) int {
	n := 0
	for _, w := range tr.Windows {
		n += len(w.Accessed)
	}
	return n
}

// TestZipf compares the mean number of accesses per window with the sum of
// the per-rank probabilities of the model's definition.
func TestZipf(t *testing.T) {
	c := small("zipf", 3)
	c.Windows = 200
	z := c.Zipf
	want := 0.0
	r0 := z.HotFraction * float64(c.Pages)
	for r := 1; r <= c.Pages; r++ {
		p := z.HotProb
		if float64(r) > r0 {
			p = z.HotProb * math.Pow(r0/float64(r), z.Exponent)
		}
		want += max(p, z.ColdProb)
	}
	tr := generate(t, c)
	got := float64(accesses(tr)) / float64(c.Windows)
	if math.Abs(got-want) > 0.02*want {
		t.Errorf("mean accesses per window %.1f, model says %.1f", got, want)
	}
	// The hot set: HotFraction of the pages accessed about HotProb of the time.
	hot := 0
	for _, f := range pageRate(tr) {
		if f > 0.85 {
			hot++
		}
	}
	if want := int(r0); hot < want*9/10 || hot > want*11/10 {
		t.Errorf("%d pages accessed in > 85%% of windows, want about %d", hot, want)
	}
}

func TestScan(t *testing.T) {
	c := small("scan", 4)
	s := c.Scan
	array := int(s.ArrayFraction * float64(c.Pages))
	tr := generate(t, c)
	for _, w := range tr.Windows {
		k := w.Index % s.Period
		lo, hi := k*array/s.SweepWindows, (k+1)*array/s.SweepWindows
		if k >= s.SweepWindows {
			lo, hi = 0, 0
		}
		inSlice := 0
		for _, id := range w.Accessed {
			p := int(tr.Pages[id].Page)
			switch {
			case p >= array:
			case p >= lo && p < hi:
				inSlice++
			default:
				t.Fatalf("window %d: array page %d accessed outside the slice [%d, %d)", w.Index, p, lo, hi)
			}
		}
		if n := hi - lo; math.Abs(float64(inSlice)-s.SweepProb*float64(n)) > 0.05*float64(n)+5 {
			t.Fatalf("window %d: %d of %d slice pages accessed, want about %.0f%%", w.Index, inSlice, n, 100*s.SweepProb)
		}
	}
}

func TestPhases(t *testing.T) {
	c := small("phases", 5)
	p := c.Phases
	tr := generate(t, c)
	ws := int(p.WorkingSetFraction * float64(c.Pages))
	for start := 0; start < c.Windows; start += p.PhaseWindows {
		// Pages accessed in at least a third of the windows of the phase form
		// one contiguous range (modulo the page count) of about ws pages.
		count := map[int]int{}
		end := min(start+p.PhaseWindows, c.Windows)
		for _, w := range tr.Windows[start:end] {
			for _, id := range w.Accessed {
				count[int(tr.Pages[id].Page)]++
			}
		}
		var busy []int
		for pg, n := range count {
			if 3*n >= end-start {
				busy = append(busy, pg)
			}
		}
		slices.Sort(busy)
		if len(busy) < ws*9/10 || len(busy) > ws {
			t.Fatalf("phase at %d: %d busy pages, want about %d", start, len(busy), ws)
		}
		gaps := 0
		for i := 1; i < len(busy); i++ {
			if busy[i]-busy[i-1] > 20 {
				gaps++
			}
		}
		if gaps > 1 { // one gap when the range wraps around
			t.Fatalf("phase at %d: busy pages are not one range (%d gaps)", start, gaps)
		}
	}
}

// TestChurn walks the trace with trace.Walker (SPEC section 1 semantics):
// the model never frees a dead page or gives a b to a live one, and freed
// page numbers are reborn.
func TestChurn(t *testing.T) {
	c := small("churn", 6)
	tr := generate(t, c)
	wk := trace.NewWalker()
	for i := range tr.Windows {
		wk.Window(&tr.Windows[i])
	}
	alive := wk.Counts.Alive
	wk.Finish()
	n := wk.Counts
	if n.IgnoredBirths != 0 || n.IgnoredFrees != 0 {
		t.Fatalf("ignored births %d, ignored frees %d, want 0", n.IgnoredBirths, n.IgnoredFrees)
	}
	if n.Births == 0 || n.Frees == 0 {
		t.Fatalf("births %d, frees %d", n.Births, n.Frees)
	}
	if n.Lives <= int64(len(tr.Pages)) {
		t.Fatalf("%d lives on %d pages: no page number was reused", n.Lives, len(tr.Pages))
	}
	want := c.Churn.AliveFraction * float64(c.Pages)
	if math.Abs(float64(alive)-want) > 0.1*want {
		t.Fatalf("%d pages alive at the end, want about %.0f", alive, want)
	}
}

func TestMix(t *testing.T) {
	c := small("mix", 9)
	tr := generate(t, c)
	per := map[uint32]int{}
	for _, p := range tr.Pages {
		per[p.Space]++
	}
	m := c.Mix
	sum := m.Zipf + m.Scan + m.Phases + m.Churn
	for space, share := range []float64{m.Zipf, m.Scan, m.Phases, m.Churn} {
		if limit := int(math.Ceil(share / sum * float64(c.Pages))); per[uint32(space)] == 0 || per[uint32(space)] > limit {
			t.Errorf("space %d: %d pages, want 1..%d", space, per[uint32(space)], limit)
		}
	}
	if len(per) != 4 {
		t.Errorf("spaces %v, want 0..3", per)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*gen.Config)
		msg  string
	}{
		{"model", func(c *gen.Config) { c.Model = "lru" }, `unknown model "lru"`},
		{"pages", func(c *gen.Config) { c.Pages = 0 }, "pages = 0"},
		{"windows", func(c *gen.Config) { c.Windows = -1 }, "windows = -1"},
		{"prob", func(c *gen.Config) { c.Zipf.HotProb = 1.5 }, "zipf.HotProb = 1.5"},
		{"sweep", func(c *gen.Config) { c.Scan.SweepWindows = 11 }, "SweepWindows <= Period"},
		{"lifetime", func(c *gen.Config) { c.Churn.Lifetime = 0.5 }, "churn.Lifetime"},
		{"mix", func(c *gen.Config) { c.Mix = gen.MixConfig{} }, "mix shares are all 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gen.DefaultConfig
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Validate: %v, want %q", err, tc.msg)
			}
			if _, rerr := gen.NewReader(c).Read(); rerr == nil || errors.Is(rerr, io.EOF) {
				t.Fatalf("Read with an invalid config: %v", rerr)
			}
		})
	}
	c := gen.DefaultConfig
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
}

// TestReadAllocs: once every page is announced, generating a window
// allocates nothing, so memory stays proportional to the pages.
func TestReadAllocs(t *testing.T) {
	c := small("scan", 1)
	c.Windows = 1000
	r := gen.NewReader(c)
	for range 100 { // every page has been swept by now
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(100, func() { r.Read() }); a > 0 {
		t.Fatalf("%v allocations per window", a)
	}
}

func TestSet(t *testing.T) {
	c := gen.DefaultConfig
	if err := c.Set("zipf.hotprob", "0.5"); err != nil || c.Zipf.HotProb != 0.5 {
		t.Fatalf("Set: %v, HotProb %v", err, c.Zipf.HotProb)
	}
	if err := c.Set("scan.Period", "7"); err != nil || c.Scan.Period != 7 {
		t.Fatalf("Set: %v, Period %v", err, c.Scan.Period)
	}
	for _, bad := range [][2]string{{"zipf", "1"}, {"lru.x", "1"}, {"zipf.nope", "1"}, {"scan.Period", "1.5"}, {"mix.zipf", "x"}} {
		if err := c.Set(bad[0], bad[1]); err == nil {
			t.Errorf("Set(%q, %q) succeeded", bad[0], bad[1])
		}
	}
	got := gen.DefaultConfig.Params()
	if len(got) != 4+5+4+4+4 || got[0] != (gen.Param{Name: "zipf.HotFraction", Value: "0.05"}) {
		t.Fatalf("Params: %v", got)
	}
}

// TestDefaultSize checks the size target of the binary format: at most 1.5
// bytes per access record on gen's default workload.
func TestDefaultSize(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 4.6 million records")
	}
	c := gen.DefaultConfig
	data := binary(t, c)
	r, err := trace.NewReaderAuto(bytes.NewReader(data), "default.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	var accesses int64
	for {
		w, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		accesses += int64(len(w.Accessed))
	}
	perRecord := float64(len(data)) / float64(accesses)
	t.Logf("%d bytes, %d access records: %.3f bytes per access record", len(data), accesses, perRecord)
	if perRecord > 1.5 {
		t.Fatalf("%.3f bytes per access record, want <= 1.5", perRecord)
	}
}
