package result

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"testing"
)

func groupRun(saved int64, proms ...int64) *Result {
	acc := make([]int64, len(proms))
	for i := range acc {
		acc[i] = 100
	}
	return &Result{Policy: "age", Params: "A=1", Promotions: proms, Accessed: acc, Saved: saved, Alive: 1000, PageSize: 4096,
		SavedPerWindow: make([]int64, len(proms)), AlivePerWindow: make([]int64, len(proms))}
}

func TestBound(t *testing.T) {
	r := groupRun(250, 5, 5)
	r.SamplePPM = 100000
	r.Groups = []*Result{groupRun(100, 1, 2), groupRun(200, 3, 4), groupRun(300, 5, 6), groupRun(400, 7, 8)}
	// savings 0.1 .. 0.4: mean 0.25, sum of squares 0.05; t(0.975, 3) = 3.182.
	want := 3.182 * math.Sqrt(0.9*0.05/12)
	if got := r.Bound(Metrics[7]); math.Abs(got-want) > 1e-12 {
		t.Errorf("savings bound %v, want %v", got, want)
	}
	// max_pr: 0.02, 0.04, 0.06, 0.08.
	want = 3.182 * math.Sqrt(0.9*0.002/12)
	if got := r.Bound(Metrics[0]); math.Abs(got-want) > 1e-12 {
		t.Errorf("max_pr bound %v, want %v", got, want)
	}
	all := *r
	all.SamplePPM = 1_000_000
	if b := all.Bound(Metrics[7]); b != 0 || all.Errors() != nil {
		t.Errorf("a 100%% sample has bound %v", b)
	}
	// Restrict keeps the groups, restricted.
	rr := r.Restrict(1, 2)
	if len(rr.Groups) != 4 || rr.Groups[3].Promotions[0] != 8 || rr.SamplePPM != r.SamplePPM {
		t.Errorf("Restrict: %+v", rr)
	}
	for df, want := range map[int]float64{1: 12.706, 9: 2.262, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980} {
		if got := studentT975(df); math.Abs(got-want) > 0.0015 {
			t.Errorf("t(0.975, %d) = %v, want %v", df, got, want)
		}
	}
}

func TestSampledEncoding(t *testing.T) {
	r := groupRun(250, 5, 5)
	r.SamplePPM = 100000
	r.Groups = []*Result{groupRun(100, 1, 2), groupRun(200, 3, 4)}
	var b bytes.Buffer
	if err := WriteCSV(&b, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows[0]) != len(CSVHeader)+1+len(Metrics) || rows[0][len(CSVHeader)] != "sample_rate" || rows[0][len(CSVHeader)+8] != "savings_err" {
		t.Fatalf("header %v", rows[0])
	}
	if rows[1][len(CSVHeader)] != "0.1" || rows[1][len(CSVHeader)+9] != FormatFloat(r.Bound(Metrics[8])) || rows[1][len(CSVHeader)+8] != "" {
		t.Fatalf("row %v: want the avg_saved_bytes bound, and none of savings (PrintedBound)", rows[1])
	}
	b.Reset()
	if err := WriteJSON(&b, []*Result{r}, false); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(b.Bytes(), &recs); err != nil {
		t.Fatal(err)
	}
	e, ok := recs[0]["err"].(map[string]any)
	if !ok || recs[0]["sample_rate"] != 0.1 || recs[0]["sample_groups"] != 2.0 || e["avg_saved_bytes"] != r.Bound(Metrics[8]) || e["savings"] != nil {
		t.Fatalf("json %s", b.Bytes())
	}
	// Unsampled: neither columns nor fields.
	r.SamplePPM = 0
	b.Reset()
	WriteJSON(&b, []*Result{r}, false)
	if bytes.Contains(b.Bytes(), []byte("err")) || bytes.Contains(b.Bytes(), []byte("sample")) {
		t.Fatalf("unsampled json %s", b.Bytes())
	}
}

// TestHeadroomBound: OPP's headroom on a sample has the random-group bound
// of the sub-samples' paired differences, and none at 100% or unsampled.
func TestHeadroomBound(t *testing.T) {
	age := groupRun(250, 5, 5)
	age.SamplePPM = 100000
	age.Groups = []*Result{groupRun(100, 1, 2), groupRun(200, 3, 4), groupRun(300, 5, 6), groupRun(400, 7, 8)}
	opp := groupRun(400, 5, 5)
	opp.Policy, opp.Params = "opp", "r=1%"
	opp.SamplePPM = 100000
	opp.Groups = []*Result{groupRun(300, 1, 2), groupRun(300, 3, 4), groupRun(500, 5, 6), groupRun(500, 7, 8)}
	// Headrooms 0.2, 0.1, 0.2, 0.1: mean 0.15, sum of squares 0.01.
	want := 3.182 * math.Sqrt(0.9*0.01/12)
	cs := Choose([]*Result{age, opp}, MaxPR, []float64{1})
	if c := cs[0]; c.Policy != "age" || !c.HasHeadroom || math.Abs(c.HeadroomErr-want) > 1e-12 {
		t.Errorf("age's headroom %+v, want bound %v", c, want)
	}
	if c := cs[1]; c.Policy != "opp" || c.HeadroomErr != 0 {
		t.Errorf("opp against itself: bound %v, want 0", c.HeadroomErr)
	}
	for _, ppm := range []int64{0, 1_000_000} {
		a, o := *age, *opp
		a.SamplePPM, o.SamplePPM = ppm, ppm
		if c := Choose([]*Result{&a, &o}, MaxPR, []float64{1})[0]; c.HeadroomErr != 0 || !c.HasHeadroom {
			t.Errorf("rate %d ppm: headroom bound %v, want 0", ppm, c.HeadroomErr)
		}
	}
}
