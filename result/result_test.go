package result

import (
	"bytes"
	"testing"
)

func TestPercentileNearestRank(t *testing.T) {
	// PRs 0.0, 0.1, ..., 0.9 in shuffled windows; W = 10.
	r := &Result{
		Promotions: []int64{9, 0, 5, 1, 8, 2, 7, 3, 6, 4},
		Accessed:   []int64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10},
	}
	// Rank ceil(q*W/100): q=99 -> 10th smallest (0.9); q=98 -> 10th;
	// q=50 -> 5th (0.4); q=1 -> 1st (0).
	for q, want := range map[int]float64{99: 0.9, 98: 0.9, 50: 0.4, 1: 0, 90: 0.8} {
		if got := r.Percentile(q); got != want {
			t.Errorf("p%d = %v, want %v", q, got, want)
		}
	}
	// W = 200: p99 is the 198th smallest, p98 the 196th.
	r = &Result{Promotions: make([]int64, 200), Accessed: make([]int64, 200)}
	for w := range 200 {
		r.Promotions[w], r.Accessed[w] = int64(w), 1000
	}
	if got := r.Percentile(99); got != 0.197 {
		t.Errorf("p99 over 200 windows = %v, want 0.197", got)
	}
	if got := r.Percentile(98); got != 0.195 {
		t.Errorf("p98 over 200 windows = %v, want 0.195", got)
	}
}

func TestEmptyWindowsAndTrace(t *testing.T) {
	r := &Result{Promotions: []int64{0, 3}, Accessed: []int64{0, 4}, Saved: 0, Alive: 0}
	if r.PR(0) != 0 || r.MaxPR() != 0.75 || r.MeanPR() != 0.375 || r.Savings() != 0 {
		t.Errorf("PR(0) %v max %v mean %v savings %v", r.PR(0), r.MaxPR(), r.MeanPR(), r.Savings())
	}
	e := &Result{}
	if e.MaxPR() != 0 || e.Percentile(99) != 0 || e.MeanPR() != 0 || e.AvgSavedBytes() != 0 {
		t.Error("empty result has non-zero metrics")
	}
}

func TestRestrict(t *testing.T) {
	r := &Result{
		Policy: "age", Params: "A=1", PageSize: 4096,
		Promotions: []int64{1, 2, 3, 4}, Accessed: []int64{5, 6, 7, 8},
		SavedPerWindow: []int64{0, 1, 2, 3}, AlivePerWindow: []int64{4, 4, 5, 5},
		Saved: 6, Alive: 18,
	}
	x := r.Restrict(1, 3)
	if x.Saved != 3 || x.Alive != 9 || x.Windows() != 2 || x.Promotions[0] != 2 || x.TotalPromotions() != 5 {
		t.Errorf("restricted: %+v", x)
	}
	// Appending to a restricted slice must not write into the original.
	_ = append(x.Promotions, 99)
	if r.Promotions[3] != 4 {
		t.Error("Restrict shares spare capacity with the original")
	}
}

func TestCSV(t *testing.T) {
	r := &Result{Policy: "paw", Params: "P=2,wait=1", Promotions: []int64{0, 1, 0}, Accessed: []int64{3, 3, 0}, Saved: 5, Alive: 9, PageSize: 4096}
	var b bytes.Buffer
	if err := WriteCSV(&b, []*Result{r}); err != nil {
		t.Fatal(err)
	}
	// max_pr 1/3, p99 rank ceil(2.97)=3 -> 1/3, mean (1/3)/3, bytes 5*4096/3.
	want := "policy,params,max_pr,p99_pr,p98_pr,mean_pr,promotions,saved_page_windows,alive_page_windows,savings,avg_saved_bytes\n" +
		"paw,\"P=2,wait=1\",0.3333333333333333,0.3333333333333333,0.3333333333333333,0.1111111111111111,1,5,9,0.5555555555555556,6826.666666666667\n"
	if b.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", b.String(), want)
	}
}
