package trace_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/trace"
)

// pageSets resolves each window's three lists of a reader's output to sets
// of pages, checking the dense-ID invariants on the way.
type pageSets struct {
	pages []trace.Page
	wins  []map[trace.Kind]map[trace.Page]bool
}

func (ps *pageSets) add(t *testing.T, w *trace.Window) {
	t.Helper()
	if w.Index != len(ps.wins) {
		t.Fatalf("window %d after %d windows", w.Index, len(ps.wins))
	}
	ps.pages = append(ps.pages, w.New...)
	m := map[trace.Kind]map[trace.Page]bool{}
	for k, ids := range [][]uint32{w.Accessed, w.Born, w.Freed} {
		set := map[trace.Page]bool{}
		for _, id := range ids {
			if int(id) >= len(ps.pages) {
				t.Fatalf("window %d: ID %d of %d pages", w.Index, id, len(ps.pages))
			}
			if set[ps.pages[id]] {
				t.Fatalf("window %d: ID %d twice", w.Index, id)
			}
			set[ps.pages[id]] = true
		}
		m[trace.Kind(k)] = set
	}
	ps.wins = append(ps.wins, m)
}

func filterSets(in *pageSets, keep func(trace.Page) bool) []map[trace.Kind]map[trace.Page]bool {
	var out []map[trace.Kind]map[trace.Page]bool
	for _, m := range in.wins {
		o := map[trace.Kind]map[trace.Page]bool{}
		for k, set := range m {
			o[k] = map[trace.Page]bool{}
			for p := range set {
				if keep(p) {
					o[k][p] = true
				}
			}
		}
		out = append(out, o)
	}
	return out
}

func equalSets(a, b []map[trace.Kind]map[trace.Page]bool) bool {
	return slices.EqualFunc(a, b, func(x, y map[trace.Kind]map[trace.Page]bool) bool {
		return maps.EqualFunc(x, y, func(s, t map[trace.Page]bool) bool { return maps.Equal(s, t) })
	})
}

func TestSampleSplit(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 17))
	for i := range testutil.Count(300) {
		tr := testutil.RandomTrace(rng)
		s := trace.Sample{PPM: []int64{500000, 250000, 100000}[i%3], Seed: rng.Uint64()}
		k := i % 5
		sp, err := trace.NewSampleSplit(tr.NewReader(), s, k)
		if err != nil {
			t.Fatal(err)
		}
		// only is the same split with GroupsOnly: the same groups, an
		// empty sample's window.
		only, err := trace.NewSampleSplit(tr.NewReader(), s, k)
		if err != nil {
			t.Fatal(err)
		}
		only.GroupsOnly()
		if sp.Header().Sample != s {
			t.Fatalf("header sample %v, want %v", sp.Header().Sample, s)
		}
		var in pageSets
		outs := make([]pageSets, 1+k)
		for w := range tr.Windows {
			in.add(t, &tr.Windows[w])
		}
		prev := []trace.Window(nil)
		var prevCopy []trace.Window
		for {
			ws, err := sp.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			// The previous windows are intact until the second Read.
			for j := range prev {
				if !slices.Equal(prev[j].Accessed, prevCopy[j].Accessed) || !slices.Equal(prev[j].Freed, prevCopy[j].Freed) {
					t.Fatal("previous window changed by the next Read")
				}
			}
			for j := range ws {
				outs[j].add(t, &ws[j])
			}
			ows, err := only.Read()
			if err != nil || len(ows) != len(ws) {
				t.Fatalf("trace %d: GroupsOnly: %d windows, %v", i, len(ows), err)
			}
			for j := range ws {
				x, y := &ws[j], &ows[j]
				if j == 0 && k > 0 {
					if x.Index != y.Index || len(y.Accessed)+len(y.Born)+len(y.Freed)+len(y.New) != 0 {
						t.Fatalf("trace %d: GroupsOnly: the sample's window %d is not empty", i, y.Index)
					}
					continue
				}
				if x.Index != y.Index || !slices.Equal(x.Accessed, y.Accessed) || !slices.Equal(x.Born, y.Born) || !slices.Equal(x.Freed, y.Freed) || !slices.Equal(x.New, y.New) {
					t.Fatalf("trace %d: GroupsOnly: window %d of output %d differs", i, x.Index, j)
				}
			}
			prev, prevCopy = ws, nil
			for j := range ws {
				prevCopy = append(prevCopy, ws[j].Clone())
			}
		}
		want := filterSets(&in, s.Keep)
		if !equalSets(outs[0].wins, want) {
			t.Fatalf("trace %d: the sample is not the trace's kept pages", i)
		}
		if !slices.Equal(sp.Pages(), outs[0].pages) {
			t.Fatalf("trace %d: Pages %v, announced %v", i, sp.Pages(), outs[0].pages)
		}
		for g := range k {
			wantG := filterSets(&in, func(p trace.Page) bool { return s.Keep(p) && s.Group(p, k) == g })
			if !equalSets(outs[1+g].wins, wantG) {
				t.Fatalf("trace %d: group %d is not the kept pages of its hash", i, g)
			}
		}
	}
}

// TestSampleSplitManyGroups: with 10, 63 and the most (64) sub-samples,
// with and without GroupsOnly, each group's lists are exactly the kept
// pages of its hash (the groups' lists are built in one array of them).
func TestSampleSplitManyGroups(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 29))
	for i := range testutil.Count(60) {
		tr := testutil.RandomTrace(rng)
		s := trace.Sample{PPM: []int64{500000, 1000000, 250000}[i%3], Seed: rng.Uint64()}
		k := []int{10, 63, trace.MaxSampleGroups}[i%3]
		var in pageSets
		for w := range tr.Windows {
			in.add(t, &tr.Windows[w])
		}
		for _, groupsOnly := range []bool{false, true} {
			sp, err := trace.NewSampleSplit(tr.NewReader(), s, k)
			if err != nil {
				t.Fatal(err)
			}
			if groupsOnly {
				sp.GroupsOnly()
			}
			outs := make([]pageSets, 1+k)
			for ws, err := sp.Read(); !errors.Is(err, io.EOF); ws, err = sp.Read() {
				if err != nil {
					t.Fatal(err)
				}
				for j := range ws {
					if j > 0 || !groupsOnly {
						outs[j].add(t, &ws[j])
					}
				}
			}
			if !groupsOnly && !equalSets(outs[0].wins, filterSets(&in, s.Keep)) {
				t.Fatalf("trace %d, %d groups: the sample is not the trace's kept pages", i, k)
			}
			for g := range k {
				wantG := filterSets(&in, func(p trace.Page) bool { return s.Keep(p) && s.Group(p, k) == g })
				if len(outs[1+g].wins) != len(wantG) || len(wantG) > 0 && !equalSets(outs[1+g].wins, wantG) {
					t.Fatalf("trace %d, %d groups (groups only %v): group %d is not the kept pages of its hash", i, k, groupsOnly, g)
				}
			}
		}
	}
}

// TestSampleAllIsIdentity: a 100% sample yields the trace itself, dense
// IDs included.
func TestSampleAllIsIdentity(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 3))
	for range testutil.Count(200) {
		tr := testutil.RandomTrace(rng)
		for _, s := range []trace.Sample{{}, {PPM: trace.SampleAll, Seed: 9}} {
			r, err := trace.NewSampleReader(tr.NewReader(), s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := trace.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if got.Header != tr.Header || !slices.Equal(got.Pages, tr.Pages) || len(got.Windows) != len(tr.Windows) {
				t.Fatalf("100%% sample differs: header %+v pages %v", got.Header, got.Pages)
			}
			for w := range got.Windows {
				a, b := got.Windows[w], tr.Windows[w]
				if !slices.Equal(a.New, b.New) || !slices.Equal(a.Accessed, b.Accessed) || !slices.Equal(a.Born, b.Born) || !slices.Equal(a.Freed, b.Freed) {
					t.Fatalf("window %d differs", w)
				}
			}
		}
	}
}

func TestSampleHash(t *testing.T) {
	// The hash is pinned (the value computed independently from the formula
	// in docs/trace-format.md): sampled traces
	// recorded by one mdk must be read the same by the next.
	s := trace.Sample{PPM: 10000, Seed: 1}
	if got := s.Hash(trace.Page{Space: 2, Page: 12345}); got != 0x4522808c67fb895f {
		t.Errorf("Hash = %#x", got)
	}
	// Rates: nested by seed, and close to the asked rate.
	lo, hi := trace.Sample{PPM: 10000, Seed: 5}, trace.Sample{PPM: 100000, Seed: 5}
	nlo, nhi := 0, 0
	groups := make([]int, 10)
	const n = 200000
	for i := range n {
		p := trace.Page{Space: uint32(i % 3), Page: uint64(i / 3)}
		if lo.Keep(p) {
			nlo++
			if !hi.Keep(p) {
				t.Fatalf("%v kept at 1%% but not at 10%% of the same seed", p)
			}
		}
		if hi.Keep(p) {
			nhi++
			groups[hi.Group(p, 10)]++
		}
	}
	if nlo < n/100*9/10 || nlo > n/100*11/10 || nhi < n/10*95/100 || nhi > n/10*105/100 {
		t.Errorf("kept %d at 1%% and %d at 10%% of %d pages", nlo, nhi, n)
	}
	for g, c := range groups {
		if c < nhi/10*85/100 || c > nhi/10*115/100 {
			t.Errorf("group %d has %d of %d pages", g, c, nhi)
		}
	}
}

func TestSampleWithin(t *testing.T) {
	have := trace.Sample{PPM: 100000, Seed: 4}
	for _, c := range []struct {
		have, req, want trace.Sample
		err             string
	}{
		{trace.Sample{}, trace.Sample{}, trace.Sample{}, ""},
		{trace.Sample{}, trace.Sample{PPM: trace.SampleAll, Seed: 3}, trace.Sample{}, ""},
		{trace.Sample{}, trace.Sample{PPM: 10000, Seed: 3}, trace.Sample{PPM: 10000, Seed: 3}, ""},
		{have, trace.Sample{}, have, ""},
		{have, trace.Sample{PPM: 10000, Seed: 4}, trace.Sample{PPM: 10000, Seed: 4}, ""},
		{have, trace.Sample{PPM: 10000, Seed: 5}, trace.Sample{}, "already sampled at 10% seed 4"},
		{have, trace.Sample{PPM: 500000, Seed: 4}, trace.Sample{}, "a rate of at most 10%"},
		{trace.Sample{}, trace.Sample{PPM: 30000}, trace.Sample{}, "divides 1000000"},
	} {
		got, err := c.have.Within(c.req)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v.Within(%v) = %v, want error %q", c.have, c.req, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v.Within(%v) = %v, %v; want %v", c.have, c.req, got, err, c.want)
		}
	}
}

func TestParseSampleRate(t *testing.T) {
	for s, want := range map[string]int64{"100%": 1000000, "10%": 100000, "1%": 10000, "0.1%": 1000, "0.0001%": 1, "12.5%": 125000, "0.01": 10000, "1": 1000000} {
		if got, err := trace.ParseSampleRate(s); err != nil || got != want {
			t.Errorf("ParseSampleRate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "%", "3%", "0%", "101%", "1.00001%", "-1%", "abc", "1e-2", "0.3"} {
		if _, err := trace.ParseSampleRate(s); err == nil {
			t.Errorf("ParseSampleRate(%q): no error", s)
		}
	}
}

// TestSampledHeaderRoundTrip: both formats keep the sample, binary as
// version 2 and text as a sample header; unsampled traces stay version 1.
func TestSampledHeaderRoundTrip(t *testing.T) {
	tr := testutil.RandomTrace(testutil.Rand(5))
	for _, s := range []trace.Sample{{}, {PPM: 1000, Seed: 12345678901234567890}, {PPM: 500000, Seed: 0}} {
		tr.Header.Sample = s
		bin := testutil.EncodeBinary(t, tr)
		if v := bin[8]; (v == 2) != !s.All() {
			t.Errorf("sample %v: binary version %d", s, v)
		}
		txt := testutil.EncodeText(t, tr)
		if got := bytes.Contains(txt, []byte("\nsample ")); got != !s.All() {
			t.Errorf("sample %v: text %q", s, txt)
		}
		for _, b := range [][]byte{bin, txt} {
			r, err := trace.NewReaderAuto(bytes.NewReader(b), "x")
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Header().Sample; got != s {
				t.Errorf("read back sample %v, want %v", got, s)
			}
		}
	}
}

func TestSampledHeaderErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"sample 1%", `expected "RATE seed N"`},
		{"sample 3% seed 1", "divides 1000000"},
		{"sample 100% seed 1", "leave the header out"},
		{"sample 1% seed x", `seed "x"`},
		{"sample 1% sead 1", `expected "RATE seed N"`},
	} {
		src := "mdk-trace 1\n" + c.line + "\n0 a 1\n"
		_, err := trace.NewTextReader(strings.NewReader(src), "t.txt")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.txt:2:") {
			t.Errorf("%q: error %v, want t.txt:2: ... %q", c.line, err, c.want)
		}
	}
}

// TestSampledBinaryHeaderRate: a version 2 header with a rate that does not
// divide 100% is corrupt, at the header's offset.
func TestSampledBinaryHeaderRate(t *testing.T) {
	fields := []byte{0x80, 0x20, 30, 0, 3, 1, 0} // page size 4096, window 30 ns, W 0, 3 ppm, seed 1, no source
	b := []byte("\x89MDKT\r\n\x1a\x02\x00\x00\x00")
	b = append(b, byte(len(fields)), 0, 0, 0)
	b = append(b, fields...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(append(b[8:16:16], fields...), crc32.MakeTable(crc32.Castagnoli)))
	_, err := trace.NewBinaryReader(bytes.NewReader(b), "s.mdkt")
	if err == nil || !strings.Contains(err.Error(), "s.mdkt: byte offset 16: header: sampling rate 3 ppm") {
		t.Fatalf("error %v", err)
	}
	fields[4] = 0x90 // 10000 ppm = 1%: 0x90 0x4e
	fields = append(fields[:5], append([]byte{0x4e}, fields[5:]...)...)
	b = append(b[:12:12], byte(len(fields)), 0, 0, 0)
	b = append(b, fields...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(append(b[8:16:16], fields...), crc32.MakeTable(crc32.Castagnoli)))
	r, err := trace.NewBinaryReader(bytes.NewReader(b), "s.mdkt")
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Header().Sample; s != (trace.Sample{PPM: 10000, Seed: 1}) {
		t.Fatalf("sample %v", s)
	}
}
