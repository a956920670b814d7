package tier

import (
	"testing"

	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/sim"
)

// TestAxis: every statistic and tier metric parses to an axis of its kind
// that names itself back, and its Func is the statistic, or the tier's
// cost, of each row of SPEC section 4's example; other names are refused.
func TestAxis(t *testing.T) {
	tr := testutil.ReadTextTrace(t, "../testdata/example.txt")
	ss, err := policy.ParseSpecs([]string{"age:A=1", "opp:r=50%"}, tr.Header.Window, policy.SpecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"max_pr", "p99_pr", "p98_pr", "mean_pr", "slowdown", "max_slowdown"} {
		a, ok := ParseAxis(name)
		if !ok || a.String() != name {
			t.Fatalf("ParseAxis(%q) = %+v, %v", name, a, ok)
		}
		m, isMetric := ParseMetric(name)
		if a.IsTier() != isMetric || (a.Stat == "") != isMetric || a.Metric != m {
			t.Fatalf("%s: axis %+v, IsTier %v", name, a, a.IsTier())
		}
		if !isMetric && StatAxis(a.Stat) != a {
			t.Fatalf("%s: StatAxis %+v, want %+v", name, StatAxis(a.Stat), a)
		}
		f := a.Func(&quarter, tr.Header.Window)
		for _, s := range ss {
			r := sim.Run(tr, s)
			var want float64
			if isMetric {
				want = quarter.Cost(r, tr.Header.Window).Of(m)
			} else {
				want = r.Stat(a.Stat)
			}
			if got := f(r); got != want {
				t.Errorf("%s of %s: %v, want %v", name, s, got, want)
			}
		}
	}
	for name, label := range map[string]string{"max_pr": "max pr", "mean_pr": "mean pr", "slowdown": "slowdown (stall s per s)", "max_slowdown": "max slowdown (worst window)"} {
		if a, _ := ParseAxis(name); a.Label() != label {
			t.Errorf("%s: label %q, want %q", name, a.Label(), label)
		}
	}
	for _, bad := range []string{"", "max", "MAX_PR", "savings", "slowdown "} {
		if a, ok := ParseAxis(bad); ok {
			t.Errorf("ParseAxis(%q) = %+v, want refused", bad, a)
		}
	}
}

// TestFormats: the units tier numbers are printed in.
func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FormatPercent(0.00123456), "0.1235%"},
		{FormatPercent(0), "0%"},
		{FormatBytes(1536 << 20), "1.5 GiB"},
		{FormatBytes(100), "100.0 B"},
		{FormatSeconds(0), "0"},
		{FormatSeconds(2e-6), "2us"},
		{FormatSeconds(1.5e-3), "1.5ms"},
		{FormatSeconds(5e-10), "0.5ns"},
		{FormatSeconds(3.25), "3.25s"},
		{FormatNs(1500), "1.5us"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestAxisValid: an axis is valid when it names one statistic or one tier
// metric, as ParseAxis returns it; a hand-made one naming neither, an
// unknown name or both is not.
func TestAxisValid(t *testing.T) {
	for _, name := range []string{"max_pr", "p99_pr", "p98_pr", "mean_pr", "slowdown", "max_slowdown"} {
		if a, _ := ParseAxis(name); !a.Valid() {
			t.Errorf("%s: not valid", name)
		}
	}
	for _, a := range []Axis{{}, {Stat: "max"}, {Metric: "slow"}, {Stat: "max_pr", Metric: Slowdown}, {Stat: "slowdown"}} {
		if a.Valid() {
			t.Errorf("%+v: valid", a)
		}
	}
}
