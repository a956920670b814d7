package result

import "testing"

// TestAtRealised places a controller's run (max_pr 2%, savings 35%) on
// hand-made curves: OPP's best at or below 2% (not the 5% rate), each fixed
// policy's best there, a policy with none that low, and the sentence and
// mpc's line with their numbers.
func TestAtRealised(t *testing.T) {
	ctl := run("auto", "age,slo=max_pr<=2%", 35, 2)
	fixed := []*Result{
		run("age", "A=1", 50, 3), run("age", "A=4", 30, 2), run("age", "A=9", 10, 0),
		run("vmin", "T=1", 70, 3),
		run("opp", "r=1%", 45, 1), run("opp", "r=2%", 55, 2), run("opp", "r=5%", 80, 5),
	}
	r := AtRealised(ctl, fixed, MaxPR)
	if r.X != 0.02 || r.OPP != fixed[5] || len(r.Policies) != 2 || r.Policies[0].Best != fixed[1] || r.Policies[1].Best != nil {
		t.Fatalf("AtRealised = %+v, want x 2%%, opp r=2%%, age A=4 and no vmin", r)
	}
	if h, ok := r.Headroom(); !ok || h != fixed[5].Savings()-ctl.Savings() {
		t.Errorf("headroom %v %v, want %v", h, ok, fixed[5].Savings()-ctl.Savings())
	}
	if want := "auto:age,slo=max_pr<=2% saves 35.00% at max_pr 2.0000%; OPP at 2.0000% saves 55.00%; age at its best (A=4), 30.00%; vmin: none at or below 2.0000%"; r.Sentence() != want {
		t.Errorf("sentence\n%q, want\n%q", r.Sentence(), want)
	}
	if want := "controller auto:age,slo=max_pr<=2%: max_pr 2.0000%, savings 35.00%; headroom vs opp at max_pr <= 2.0000%: +20.00 pts (opp:r=2% saves 55.00%)"; r.Line() != want {
		t.Errorf("line\n%q, want\n%q", r.Line(), want)
	}
	// Without OPP: no OPP clause, no headroom.
	r = AtRealised(ctl, fixed[:4], MaxPR)
	if _, ok := r.Headroom(); ok || r.OPP != nil {
		t.Errorf("without OPP: headroom %v, OPP %v", ok, r.OPP)
	}
	if want := "auto:age,slo=max_pr<=2% saves 35.00% at max_pr 2.0000%; age at its best (A=4), 30.00%; vmin: none at or below 2.0000%"; r.Sentence() != want {
		t.Errorf("sentence without OPP\n%q, want\n%q", r.Sentence(), want)
	}
}
