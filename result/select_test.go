package result

import (
	"reflect"
	"testing"
)

// run is a one-window result with the given savings (S out of 100 alive
// page-windows) and promotion rate (p out of 100 accesses).
func run(policy, params string, saved, p int64) *Result {
	return &Result{Policy: policy, Params: params, Promotions: []int64{p}, Accessed: []int64{100},
		Saved: saved, Alive: 100, SavedPerWindow: []int64{saved}, AlivePerWindow: []int64{100}}
}

func TestBestTies(t *testing.T) {
	rs := []*Result{
		run("age", "A=1", 50, 3), // over a 2% target
		run("age", "A=2", 40, 2), // most savings at or below 2%, ...
		run("age", "A=3", 40, 1), // ... tied: the lower statistic wins
		run("age", "A=4", 40, 1), // tied again: the earlier wins
		run("age", "A=5", 10, 0),
	}
	if b := Best(rs, MaxPR, 0.02); b != rs[2] {
		t.Errorf("Best = %v, want A=3", b.Params)
	}
	if b := Best(rs, MaxPR, -1); b != nil {
		t.Errorf("Best below every statistic = %v, want nil", b.Params)
	}
	if k := BestIndex([]int{4, 1, 3}, func(i int) *Result { return rs[i] }, MaxPR, 0.02); k != 3 {
		t.Errorf("BestIndex = %d, want 3 (A=4 beats A=2 on the statistic)", k)
	}
	if k := BestIndex([]int{0}, func(i int) *Result { return rs[i] }, MaxPR, 0.02); k != -1 {
		t.Errorf("BestIndex with none meeting the target = %d, want -1", k)
	}
}

func TestByPolicyAndGroup(t *testing.T) {
	rs := []*Result{run("vmin", "T=1", 0, 0), run("age", "A=1", 0, 0), run("vmin", "T=2", 0, 0), run("opp", "r=0", 0, 0), run("age", "A=2", 0, 0)}
	names, idx := ByPolicy(len(rs), func(i int) string { return rs[i].Policy })
	if want := []string{"vmin", "age", "opp"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names %v, want %v (first-seen order)", names, want)
	}
	if want := map[string][]int{"vmin": {0, 2}, "age": {1, 4}, "opp": {3}}; !reflect.DeepEqual(idx, want) {
		t.Errorf("groups %v, want %v", idx, want)
	}
	gnames, groups := Group(rs)
	if !reflect.DeepEqual(gnames, names) {
		t.Errorf("Group names %v, want %v", gnames, names)
	}
	for _, n := range names {
		for j, k := range idx[n] {
			if groups[n][j] != rs[k] {
				t.Errorf("Group[%s][%d] is not result %d", n, j, k)
			}
		}
	}
}

func TestChooseHeadroom(t *testing.T) {
	rs := []*Result{run("age", "A=1", 30, 1), run("opp", "r=1%", 45, 1), run("opp", "r=5%", 60, 5)}
	cs := Choose(rs, MaxPR, []float64{0.01, 0.001})
	if len(cs) != 4 {
		t.Fatalf("%d choices, want 4 (2 policies x 2 targets)", len(cs))
	}
	if c := cs[0]; c.Policy != "age" || c.Best != rs[0] || !c.HasHeadroom || c.Headroom != rs[1].Savings()-rs[0].Savings() {
		t.Errorf("age at 1%%: %+v, want A=1 with 0.15 headroom", c)
	}
	if c := cs[1]; c.Best != nil || c.HasHeadroom {
		t.Errorf("age at 0.1%%: %+v, want no setting and no headroom", c)
	}
}

// TestBestByOtherAxis picks on another x than a statistic: the total
// promotions, where Best on max_pr would pick otherwise.
func TestBestByOtherAxis(t *testing.T) {
	rs := []*Result{
		{Policy: "age", Params: "A=1", Promotions: []int64{0, 4}, Accessed: []int64{10, 100}, Saved: 50, Alive: 100},
		{Policy: "age", Params: "A=2", Promotions: []int64{3, 0}, Accessed: []int64{10, 100}, Saved: 40, Alive: 100},
	}
	promos := func(r *Result) float64 { return float64(r.TotalPromotions()) }
	if b := BestBy(rs, promos, 3); b != rs[1] {
		t.Errorf("BestBy(promotions <= 3) = %v, want A=2", b)
	}
	if b := Best(rs, MaxPR, 0.05); b != rs[0] {
		t.Errorf("Best(max_pr <= 5%%) = %v, want A=1", b)
	}
	cs := ChooseBy(rs, promos, []float64{3, 4})
	if len(cs) != 2 || cs[0].Best != rs[1] || cs[1].Best != rs[0] {
		t.Errorf("ChooseBy = %+v", cs)
	}
}
