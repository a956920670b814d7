package headroom

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

func mustParse(t *testing.T, spec string) policy.Setting {
	t.Helper()
	ss, err := policy.Parse(spec, trace.DefaultWindow)
	if err != nil || len(ss) != 1 {
		t.Fatalf("parse %q: %v (%d settings)", spec, err, len(ss))
	}
	return ss[0]
}

func parseText(t *testing.T, text string) *trace.Trace {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hand.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return testutil.ReadTextTrace(t, path)
}

// handTrace has a gap of each class for pace:P=2,A=2 against opp:r=50%
// (worked out in TestHandMadeClasses). Pages: 1 S, 2 L, 3 X, 4 Y, 5 M,
// 6 P, 7 Q, 8 N.
const handTrace = `mdk-trace 1
windows 8
0 a 1 2 3
1 a 2 4
2 a 5
3 a 3 4 5
5 a 2 5 6 7
6 a 8
7 a 8
`

// TestHandMadeClasses checks every class's content on a hand-made trace.
// |A_w| = 3 2 1 3 0 4 0 0, so opp:r=50%'s budgets are 1 1 0 1 0 2 0 0; at
// window 3 it takes X's gap (g=2) over Y's (g=1), at window 5 both L's
// (g=3) and M's (g=1). pace:P=2,A=2 reclaims every life's first gap at its
// touch (d = inf > 2) and the others as age(2).
func TestHandMadeClasses(t *testing.T) {
	tr := parseText(t, handTrace)
	names := map[uint64]string{1: "S", 2: "L", 3: "X", 4: "Y", 5: "M", 6: "P", 7: "Q", 8: "N"}
	got := map[Class][]string{}
	c, err := Compare(context.Background(), tr, mustParse(t, "pace:P=2,A=2"), mustParse(t, "opp:r=50%"), Options{
		OnGap: func(g *Gap) {
			got[g.Class] = append(got[g.Class], fmt.Sprintf("%s%d", names[tr.Pages[g.Page].Page], g.Start))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range got {
		slices.Sort(got[k])
	}
	want := map[Class][]string{
		// S's open gap, L's last, X's first (both promote at 3) and
		// last, P's and Q's open gaps: all reclaimed at the touch.
		Same: {"L5", "P5", "Q5", "S0", "X0", "X3"},
		// L's gap 1..5 (age at 3, OPP at 1), Y's open gap 3.. (d=2: age
		// at 5), M's open gap 5.. (age at 7, saving nothing).
		Later: {"L1", "M5", "Y3"},
		// M's gap 3..5 (g=1 < A, d=1): OPP's budget at 5 takes it.
		Missed: {"M3"},
		// first gaps with g=0 (L0, M2, N6: a promotion saving nothing)
		// and Y's first gap, refused by OPP's budget at window 3.
		Spent:   {"L0", "M2", "N6", "Y1"},
		Neither: {"N7"},
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("gaps by class (-want +got):\n%s", d)
	}
	wantT := [NumClasses]Tally{
		Same:    {Gaps: 6, Saved: [2]int64{19, 19}, Promotions: [2]int64{1, 1}},
		Later:   {Gaps: 3, Saved: [2]int64{3, 9}, Promotions: [2]int64{1, 1}},
		Missed:  {Gaps: 1, Saved: [2]int64{0, 1}, Promotions: [2]int64{0, 1}},
		Spent:   {Gaps: 4, Saved: [2]int64{1, 0}, Promotions: [2]int64{4, 0}},
		Neither: {Gaps: 1},
	}
	if d := gocmp.Diff(wantT, c.Classes); d != "" {
		t.Errorf("tallies (-want +got):\n%s", d)
	}
	if c.Setting.Saved != 23 || c.Ref.Saved != 29 || c.Setting.TotalPromotions() != 6 || c.Ref.TotalPromotions() != 3 {
		t.Errorf("runs: setting %d saved %d promotions, reference %d saved %d promotions; want 23 6 29 3",
			c.Setting.Saved, c.Setting.TotalPromotions(), c.Ref.Saved, c.Ref.TotalPromotions())
	}
	// Swapped, later becomes earlier and missed and spent trade places.
	sw, err := Compare(context.Background(), tr, mustParse(t, "opp:r=50%"), mustParse(t, "pace:P=2,A=2"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	mirror := func(x Tally) Tally {
		x.Saved[0], x.Saved[1] = x.Saved[1], x.Saved[0]
		x.Promotions[0], x.Promotions[1] = x.Promotions[1], x.Promotions[0]
		return x
	}
	wantSw := [NumClasses]Tally{
		Same: mirror(wantT[Same]), Earlier: mirror(wantT[Later]), Missed: mirror(wantT[Spent]),
		Spent: mirror(wantT[Missed]), Neither: wantT[Neither],
	}
	if d := gocmp.Diff(wantSw, sw.Classes); d != "" {
		t.Errorf("swapped tallies (-want +got):\n%s", d)
	}
	// The splits: the missed gap M3 has d=1, g=1, age 1, 2 touches.
	for _, sp := range c.Splits {
		var labels []string
		for _, b := range sp.Buckets {
			if b.Classes[Missed].Gaps > 0 {
				labels = append(labels, b.Label)
			}
		}
		want := map[string]string{"prior": "1", "idle": "1", "age": "1", "touches": "2-3", "window": "3", "space": "0", "region": "0x1000-0x9000"}[sp.Dim]
		if len(labels) != 1 || labels[0] != want {
			t.Errorf("split %s: missed gap in %q, want %q", sp.Dim, labels, want)
		}
	}
}

// settingsFor returns a mix of every policy's settings.
func settingsFor(t *testing.T) []policy.Setting {
	var ss []policy.Setting
	for _, spec := range []string{"age:A=0|1|3", "vmin:T=0|2", "opp:r=0|10%|50%", "paw:P=1|3,wait=0|2", "pace:P=2|inf,A=0|2"} {
		s, err := policy.Parse(spec, trace.DefaultWindow)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s...)
	}
	return ss
}

// checkIdentity compares every pair (a, b) of ss on tr: the classes'
// savings and promotions equal the totals of separate simulator runs, and
// against OPP nothing is earlier.
func checkIdentity(t *testing.T, name string, tr *trace.Trace, ss []policy.Setting) {
	t.Helper()
	runs := make([]int64, len(ss))
	proms := make([]int64, len(ss))
	for i, s := range ss {
		r := sim.Run(tr, s)
		runs[i], proms[i] = r.Saved, r.TotalPromotions()
	}
	for i, a := range ss {
		for j, b := range ss {
			c, err := Compare(context.Background(), tr, a, b, Options{})
			if err != nil {
				t.Fatal(err)
			}
			tot := c.Total()
			if tot.Saved != [2]int64{runs[i], runs[j]} || tot.Promotions != [2]int64{proms[i], proms[j]} {
				t.Fatalf("%s: %s vs %s: classes save %v promote %v; runs save %d %d promote %d %d",
					name, policy.String(a), policy.String(b), tot.Saved, tot.Promotions, runs[i], runs[j], proms[i], proms[j])
			}
			var lost int64
			for _, x := range c.Classes {
				lost += x.Lost()
			}
			if lost != runs[j]-runs[i] {
				t.Fatalf("%s: %s vs %s: classes lose %d, headroom %d", name, policy.String(a), policy.String(b), lost, runs[j]-runs[i])
			}
			if b.Policy() == "opp" && c.Classes[Earlier].Gaps != 0 {
				t.Fatalf("%s: %s vs %s: %d gaps earlier than OPP", name, policy.String(a), policy.String(b), c.Classes[Earlier].Gaps)
			}
			if i == j && (c.Classes[Same].Gaps+c.Classes[Neither].Gaps != tot.Gaps) {
				t.Fatalf("%s: %s vs itself: %+v", name, policy.String(a), c.Classes)
			}
			if err := c.Check(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestIdentityRandom(t *testing.T) {
	ss := settingsFor(t)
	rng := testutil.Rand(testutil.Seed(t, 24))
	for n := range testutil.Count(150) {
		checkIdentity(t, fmt.Sprintf("random trace %d", n), testutil.RandomTrace(rng), ss)
	}
}

func TestIdentityGen(t *testing.T) {
	var ss []policy.Setting
	for _, name := range policy.DefaultPolicies {
		g := policy.DefaultGrid(name, trace.DefaultWindow)
		ss = append(ss, g[0], g[len(g)/3], g[len(g)/2])
	}
	for _, model := range gen.Models {
		cfg := gen.DefaultConfig
		cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, 300, 30, 3
		tr, err := trace.ReadAll(gen.NewReader(cfg))
		if err != nil {
			t.Fatal(err)
		}
		checkIdentity(t, "gen "+model, tr, ss)
	}
}

func TestRateAt(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want int64
	}{{0, 0}, {0.5, 500000}, {1.0 / 3, 333333}, {0.02, 20000}, {1, policy.MaxPPM}, {1e-7, 0}} {
		if got := RateAt(tc.x); got != tc.want {
			t.Errorf("RateAt(%v) = %d, want %d", tc.x, got, tc.want)
		}
	}
}

// TestCompareWithMappings: a hand-made trace with its mappings (as mdk
// record writes them) splits the headroom by mapping.
func TestCompareWithMappings(t *testing.T) {
	tr := parseText(t, `mdk-trace 1
windows 6
0 a 0x400 0x401 0x7f000
1 a 0x400
2 a 0x400
5 a 0x400 0x401
`)
	ms := []trace.Mapping{
		{Space: 0, Start: 0x400000, End: 0x402000, Perms: "rw-p", Path: "[heap]"},
		{Space: 0, Start: 0x7f000000, End: 0x7f100000, Perms: "rw-p"},
	}
	c, err := Compare(context.Background(), tr, mustParse(t, "age:A=3"), mustParse(t, "opp:r=50%"), Options{Regions: trace.FromMappings(tr.Pages, tr.Header.PageSize, ms)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sp := range c.Splits {
		if sp.Dim != "region" {
			continue
		}
		for _, b := range sp.Buckets {
			var lost int64
			for _, x := range b.Classes {
				lost += x.Lost()
			}
			got[b.Label] = lost
		}
	}
	// Heap: page 0x401's gap 0..5 (g=4): age at 3 saves 1, OPP (budget 1
	// at window 5, given to the longest gap ending there) 4: 3 lost; page
	// 0x400's gaps have g=0 but for 2..5 (g=2: too short for age, and
	// OPP's budget went to 0x401). Anonymous: 0x7f000's open gap 0.. (g=5): age at 3
	// saves 2, OPP 5: 3 lost.
	want := map[string]int64{"[heap] 0x400000-0x402000": 3, "[anon] 0x7f000000-0x7f100000": 3}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("headroom by region (-want +got):\n%s", d)
	}
}
