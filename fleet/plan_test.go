package fleet_test

import (
	"strings"
	"testing"

	"mdk/fleet"
	"mdk/trace"
)

// FuzzReadList: every entry is trimmed, non-empty, not a comment, and
// appears in the input on a line of its own.
func FuzzReadList(f *testing.F) {
	f.Add("# jobs\na.mdkt\n\n  b.txt  \r\ngs://bucket/c.mdkt\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		lines := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			lines[strings.TrimSpace(l)] = true
		}
		for _, e := range fleet.ReadList(s) {
			if e == "" || e != strings.TrimSpace(e) || strings.HasPrefix(e, "#") || !lines[e] {
				t.Fatalf("entry %q of %q", e, s)
			}
		}
	})
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []fleet.Config{
		{Policies: []string{"age"}, Window: 0},
		{Policies: []string{"nope"}, Window: trace.DefaultWindow},
		{Policies: []string{"lopp"}, Window: trace.DefaultWindow},
		{Policies: []string{"age"}, SLO: "max_pr<2%", Window: trace.DefaultWindow},
	} {
		if _, err := c.Compile(); err == nil {
			t.Errorf("%+v compiles", c)
		}
	}
	p, err := fleet.Config{Policies: []string{"age:A=1|2", "vmin:T=3"}, SLO: "max_pr<=2%", Window: trace.DefaultWindow}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Settings) != 3 || len(p.All) <= 3 || len(p.Names) != 2 || p.All[3].Policy() != "opp" {
		t.Errorf("plan: %d settings, %d in all, names %v", len(p.Settings), len(p.All), p.Names)
	}
}

// TestCompileRefusesSlowdownSLO: fleet tunes on promotion rates; an SLO on
// a tier's slowdown (mdk tune's) is an error, not a panic at the first job.
func TestCompileRefusesSlowdownSLO(t *testing.T) {
	for _, slo := range []string{"slowdown<=1%", "max_slowdown<=1%"} {
		_, err := fleet.Config{Policies: []string{"age"}, SLO: slo, Window: trace.DefaultWindow}.Compile()
		if err == nil || !strings.Contains(err.Error(), "mdk fleet tunes on a promotion-rate statistic") {
			t.Errorf("%s: %v", slo, err)
		}
	}
}
