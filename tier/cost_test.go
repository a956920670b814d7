package tier

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/result"
	"mdk/sim"
)

// quarter is a tier whose figures make the worked example's arithmetic easy
// to follow: a stored page costs a quarter page, a promotion 5 us.
var quarter = Tier{Name: "test", Source: "test", PageSizeBytes: 4096, StoredBytesPerPage: 1024, PromotionNs: Latency{Mean: 5000}}

func rat(a, b int64) float64 {
	f, _ := big.NewRat(a, b).Float64()
	return f
}

// TestCostSpecExample checks every number of the tier model on every row of
// SPEC section 4's worked example against the exact rationals of its
// formulas (docs/tiers.md), with W = 10 windows of 30 s, L = 51, 4 KiB pages.
func TestCostSpecExample(t *testing.T) {
	tr := testutil.ReadTextTrace(t, "../testdata/example.txt")
	if tr.Header.Window != 30*time.Second {
		t.Fatalf("window %v, want 30s", tr.Header.Window)
	}
	for _, row := range testutil.SpecTable {
		ss, err := policy.Parse(row.Spec, tr.Header.Window)
		if err != nil || len(ss) != 1 {
			t.Fatalf("%s: %v %v", row.Spec, ss, err)
		}
		r := sim.Run(tr, ss[0])
		var p, most int64
		for _, x := range row.Promotions {
			p += x
			most = max(most, x)
		}
		want := Cost{
			// S x 4096 x 3/4 / 10
			NetAvgSavedBytes: rat(row.Saved*4096*3, 4*10),
			// S x 3/4 / 51
			NetSavings: rat(row.Saved*3, 4*51),
			// p x 5 us / 10, in seconds
			StallSecondsPerWindow: rat(p*5000, 10*1e9),
			// (p x 5 us / 10) / 30 s
			Slowdown: rat(p*5000, 10*30e9),
			// most x 5 us / 30 s
			MaxSlowdown: rat(most*5000, 30e9),
		}
		if got := quarter.Cost(r, tr.Header.Window); got != want {
			t.Errorf("%s: cost\n got %+v\nwant %+v", row.Spec, got, want)
		}
	}
}

// TestCostWorkedRow pins age:A=1 (S = 24, 4 promotions, at most 1 per window)
// in decimal, as docs/tiers.md works it out.
func TestCostWorkedRow(t *testing.T) {
	r := &result.Result{Policy: "age", Params: "A=1", PageSize: 4096, Saved: 24, Alive: 51,
		Promotions: testutil.SpecTable[0].Promotions, Accessed: testutil.SpecAccessed}
	c := quarter.Cost(r, 30*time.Second)
	got := strings.Join(c.Row(), ",")
	want := "7372.8,0.35294117647058826,2e-06,6.666666666666667e-08,1.6666666666666668e-07"
	if got != want {
		t.Errorf("age:A=1 on the quarter tier: %s, want %s", got, want)
	}
	// Without the tier's memory (an SSD), the net bytes are the SPEC's
	// avg_saved_bytes.
	ssd := quarter
	ssd.StoredBytesPerPage = 0
	if c := ssd.Cost(r, 30*time.Second); c.NetAvgSavedBytes != r.AvgSavedBytes() || c.NetSavings != r.Savings() {
		t.Errorf("no stored bytes: net %v / %v, want the SPEC's %v / %v", c.NetAvgSavedBytes, c.NetSavings, r.AvgSavedBytes(), r.Savings())
	}
	// A trace of 8 KiB pages on the same tier keeps a quarter of each page.
	r8 := *r
	r8.PageSize = 8192
	if c := quarter.Cost(&r8, 30*time.Second); c.NetAvgSavedBytes != 2*7372.8 {
		t.Errorf("8 KiB pages: net %v, want %v", c.NetAvgSavedBytes, 2*7372.8)
	}
}

func TestCostEmpty(t *testing.T) {
	if c := quarter.Cost(&result.Result{PageSize: 4096}, 30*time.Second); c != (Cost{}) {
		t.Errorf("empty result: %+v, want zeros", c)
	}
	r := &result.Result{PageSize: 4096, Promotions: []int64{2}, Accessed: []int64{2}, Saved: 1, Alive: 1}
	if c := quarter.Cost(r, 0); c.Slowdown != 0 || c.MaxSlowdown != 0 || c.StallSecondsPerWindow != 1e-5 {
		t.Errorf("no window length: %+v", c)
	}
}

// TestWriteCSVJSON checks that the tier's columns follow SPEC section 6's
// unchanged and that JSON has the same keys and digits.
func TestWriteCSVJSON(t *testing.T) {
	r := &result.Result{Policy: "age", Params: "A=1", PageSize: 4096, Saved: 24, Alive: 51,
		Promotions: testutil.SpecTable[0].Promotions, Accessed: testutil.SpecAccessed}
	var plain, with bytes.Buffer
	if err := result.WriteCSV(&plain, []*result.Result{r}); err != nil {
		t.Fatal(err)
	}
	if err := quarter.WriteCSV(&with, []*result.Result{r}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	pr, _ := csv.NewReader(&plain).ReadAll()
	wr, err := csv.NewReader(bytes.NewReader(with.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range pr {
		if got, want := strings.Join(wr[i][:len(pr[i])], ","), strings.Join(pr[i], ","); got != want {
			t.Errorf("row %d: SPEC columns %s, want %s", i, got, want)
		}
		if got, want := len(wr[i]), len(pr[i])+len(Columns); got != want {
			t.Errorf("row %d: %d columns, want %d", i, got, want)
		}
	}
	if got := strings.Join(wr[0][len(pr[0]):], ","); got != strings.Join(Columns, ",") {
		t.Errorf("tier header %s", got)
	}
	var js bytes.Buffer
	if err := quarter.WriteJSON(&js, []*result.Result{r}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &recs); err != nil {
		t.Fatal(err)
	}
	for i, k := range append(append([]string{}, result.CSVHeader...), Columns...) {
		if k == "policy" || k == "params" {
			continue
		}
		if got := string(recs[0][k]); got != wr[1][i] {
			t.Errorf("JSON %s = %s, CSV %s", k, got, wr[1][i])
		}
	}
}

func TestMetric(t *testing.T) {
	r := &result.Result{PageSize: 4096, Promotions: []int64{3, 1}, Accessed: []int64{4, 4}, Saved: 2, Alive: 8}
	f := quarter.Func(MaxSlowdown, time.Second)
	if got, want := f(r), rat(3*5000, 1e9); got != want {
		t.Errorf("max_slowdown %v, want %v", got, want)
	}
	if m, ok := ParseMetric("slowdown"); !ok || m != Slowdown {
		t.Errorf("ParseMetric(slowdown) = %q, %v", m, ok)
	}
	if _, ok := ParseMetric("max_pr"); ok {
		t.Error("max_pr is not a tier metric")
	}
}
