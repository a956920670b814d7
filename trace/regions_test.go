package trace_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/internal/testutil"
	"mdk/trace"
)

func TestAddressRanges(t *testing.T) {
	pg := func(space uint32, page uint64) trace.Page { return trace.Page{Space: space, Page: page} }
	pages := []trace.Page{pg(0, 10), pg(0, 11), pg(1, 5), pg(0, 300), pg(0, 10+256), pg(0, 1000)}
	r := trace.AddressRanges(pages, 4096)
	var got []string
	for i := range pages {
		got = append(got, r.Label(r.Of(uint32(i))))
	}
	// 10, 11 and 266 are under 256 pages (1 MiB) apart, 300 is 34 pages
	// from 266; 1000 is a range of its own, and space 1 too.
	want := []string{"0xa000-0x12d000", "0xa000-0x12d000", "1/0x5000-0x6000", "0xa000-0x12d000", "0xa000-0x12d000", "0x3e8000-0x3e9000"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("labels (-want +got):\n%s", d)
	}
	if r.Len() != 3 || r.Pages(0) != 4 {
		t.Errorf("%d regions, first of %d pages; want 3, 4", r.Len(), r.Pages(0))
	}
}

// TestFromMappingsBruteForce compares the regions of random pages among
// random, overlapping mappings with a scan of every mapping.
func TestFromMappingsBruteForce(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 51))
	for n := range testutil.Count(300) {
		var ms []trace.Mapping
		for range rng.IntN(8) {
			start := uint64(rng.IntN(64)) * 4096
			ms = append(ms, trace.Mapping{Window: rng.IntN(3), Space: uint32(rng.IntN(2)), Start: start,
				End: start + uint64(1+rng.IntN(16))*4096, Perms: "rw-p", Path: []string{"", "[heap]", "/bin/x"}[rng.IntN(3)]})
		}
		var pages []trace.Page
		for range 1 + rng.IntN(30) {
			p := trace.Page{Space: uint32(rng.IntN(2)), Page: uint64(rng.IntN(90))}
			if !slices.Contains(pages, p) {
				pages = append(pages, p)
			}
		}
		r := trace.FromMappings(pages, 4096, ms)
		for id, p := range pages {
			best := -1
			for i, m := range ms {
				a := p.Page * 4096
				if m.Space == p.Space && m.Start <= a && a < m.End && (best < 0 || m.Window >= ms[best].Window) {
					best = i
				}
			}
			got := r.Label(r.Of(uint32(id)))
			if best >= 0 && got != ms[best].Label() || best < 0 && !strings.HasPrefix(got, "unmapped ") {
				t.Fatalf("case %d: page %v in %q; brute force %d of %+v", n, p, got, best, ms)
			}
		}
		var sum int64
		for i := range r.Len() {
			sum += r.Pages(i)
		}
		if sum != int64(len(pages)) {
			t.Fatalf("case %d: regions hold %d pages of %d", n, sum, len(pages))
		}
	}
}
