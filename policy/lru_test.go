package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParseLRU(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"lru:C=100", "[lru:C=100]"},
		{"lru:C=0|7|inf", "[lru:C=0 lru:C=7 lru:C=inf]"},
		{"lru:C=50%", "[lru:C=50%]"},
		{"lru:C=0.5%|33.3333%", "[lru:C=0.5% lru:C=33.3333%]"},
		{"lru:C=10..30/10", "[lru:C=10 lru:C=20 lru:C=30]"},
		{"lru:C=0%..100%/25%", "[lru:C=0% lru:C=25% lru:C=50% lru:C=75% lru:C=100%]"},
		{"lru:C=3|3|50%|50%", "[lru:C=3 lru:C=50%]"},
	}
	for _, tc := range tests {
		ss, err := Parse(tc.spec, w30)
		if err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		var got []string
		for _, s := range ss {
			got = append(got, String(s))
		}
		if g := "[" + strings.Join(got, " ") + "]"; g != tc.want {
			t.Errorf("%s: got %s, want %s", tc.spec, g, tc.want)
		}
	}
	for _, tc := range []struct{ spec, want string }{
		{"lru:C=-1", `lru:C=-1: bad value "-1" for C: want a number of pages or a share such as 50%, or inf`},
		{"lru:C=0.5", `lru:C=0.5: bad value "0.5" for C: want a number of pages or a share such as 50%, or inf`},
		{"lru:C=120%", "lru:C=120%: C must be a share between 0 and 100%, got 120%"},
		{"lru:C=0%..100%", "lru:C=0%..100%: bad range \"0%..100%\": a share range needs a step, as in 0%..100%/10%"},
		{"lru:C=0..50%/5%", "lru:C=0..50%/5%: bad range \"0..50%/5%\": give the bounds and the step all as pages or all as shares"},
		{"lru:C=1..inf", "lru:C=1..inf: bad range \"1..inf\": inf cannot be a range bound"},
		{"lru:C=5..1", "lru:C=5..1: bad range \"5..1\": end is less than start"},
		{"lru", ""},
	} {
		_, err := Parse(tc.spec, w30)
		if fmt.Sprint(err) != tc.want && !(tc.want == "" && err == nil) {
			t.Errorf("%s: err %v, want %s", tc.spec, err, tc.want)
		}
	}
}

// TestLRUGridAndLimit: the default grid is 0% to 100% by 2.5%, and a share
// rounds down.
func TestLRUGridAndLimit(t *testing.T) {
	g := DefaultGrid("lru", w30)
	if len(g) != 41 || String(g[0]) != "lru:C=0%" || String(g[1]) != "lru:C=2.5%" || String(g[40]) != "lru:C=100%" {
		t.Fatalf("grid %v", g)
	}
	if l := (LRU{SharePPM: 333333, Share: true}).Limit(10); l != 3 {
		t.Errorf("33.3333%% of 10: %d, want 3", l)
	}
	if l := (LRU{C: 7}).Limit(1000); l != 7 {
		t.Errorf("C=7: %d", l)
	}
}

// TestRankLRU: most recent first: the later last touch, then the later
// touch before it (a first touch lowest), then the smaller page ID.
func TestRankLRU(t *testing.T) {
	ps := []PageState{
		{Page: 5, LastTouch: 3, Prior: Inf},
		{Page: 1, LastTouch: 3, Prior: 2},
		{Page: 2, LastTouch: 4, Prior: Inf},
		{Page: 0, LastTouch: 3, Prior: Inf},
		{Page: 9, LastTouch: 3, Prior: 1},
	}
	for keep, want := range []string{"[2 9 1 0 5]", "[9 1 0 5]", "[1 0 5]", "[0 5]", "[5]"} {
		out := RankLRU(ps, int64(keep))
		slices.SortFunc(out, func(a, b PageState) int { return cmpRecency(&a, &b) })
		var got []uint32
		for _, p := range out {
			got = append(got, p.Page)
		}
		if fmt.Sprint(got) != want || ps[0].Page != 5 {
			t.Errorf("keep %d: reclaimed %v, want %s", keep, got, want)
		}
	}
	for i := range ps[:len(ps)-1] {
		if MoreRecent(&ps[i], &ps[i+1]) == MoreRecent(&ps[i+1], &ps[i]) {
			t.Errorf("MoreRecent is not a strict order on %v, %v", ps[i], ps[i+1])
		}
	}
	if RankLRU(ps, 5) != nil || len(RankLRU(ps, -1)) != 5 {
		t.Error("keep >= n reclaims none; keep < 0 all")
	}
}

// TestRankLRUEqualsSort: the selection reclaims exactly the pages past the
// first keep of a full sort, on random states with many ties.
func TestRankLRUEqualsSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := range 2000 {
		ps := make([]PageState, rng.IntN(40))
		for i := range ps {
			prior := 1 + rng.IntN(4)
			if prior == 4 {
				prior = Inf
			}
			ps[i] = PageState{Page: uint32(rng.IntN(1000)), LastTouch: rng.IntN(4), Prior: prior}
		}
		keep := int64(rng.IntN(len(ps) + 2))
		sorted := slices.Clone(ps)
		slices.SortFunc(sorted, func(a, b PageState) int { return cmpRecency(&a, &b) })
		var want []PageState
		if keep < int64(len(ps)) {
			want = sorted[keep:]
		}
		got := RankLRU(ps, keep)
		slices.SortFunc(got, func(a, b PageState) int { return cmpRecency(&a, &b) })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d, keep %d of %v: got %v, want %v", n, keep, ps, got, want)
		}
	}
}
