package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDemoShowsEveryPolicy runs mdk demo and checks that its workload and
// grids let every policy show its character at the 1%, 2% and 5% targets:
// each meets them with real savings (not "none meets it", not 0.00% from a
// setting that never reclaims), the oracles order as the theory says (opp
// >= vmin >= age), and paw's prior-distance test beats age's plain idle
// time at 1% and 2%.
func TestDemoShowsEveryPolicy(t *testing.T) {
	code, out, errs := run(t, "", "demo", "--dir", filepath.Join(t.TempDir(), "demo"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	savings := map[string]float64{} // "policy target" -> savings (%)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasSuffix(f[1], "%") {
			continue
		}
		if f[2] == "(none" {
			savings[f[0]+" "+f[1]] = -1
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(f[3], "%"), 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		savings[f[0]+" "+f[1]] = v
	}
	for _, target := range []string{"1%", "2%", "5%"} {
		s := func(p string) float64 { return savings[p+" "+target] }
		for _, p := range []string{"age", "vmin", "opp", "paw", "pace"} {
			if s(p) <= 0 {
				t.Errorf("%s at %s: savings %v, want a setting that saves something\n%s", p, target, s(p), out)
			}
		}
		if !(s("opp") >= s("vmin") && s("vmin") >= s("age")) {
			t.Errorf("at %s: opp %v, vmin %v, age %v: want opp >= vmin >= age", target, s("opp"), s("vmin"), s("age"))
		}
		if target != "5%" && s("paw") <= s("age") {
			t.Errorf("at %s: paw %v does not beat age %v", target, s("paw"), s("age"))
		}
	}
}
