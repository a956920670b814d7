package tune

import (
	"bytes"
	"encoding/json"
	"testing"

	"mdk/result"
	"mdk/tier"
)

func TestParseSLO(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SLO
		str  string
	}{
		{"max_pr<=2%", SLO{Stat: tier.StatAxis(result.MaxPR), PPM: 20000}, "max_pr<=2%"},
		{" p99_pr <= 0.005 ", SLO{Stat: tier.StatAxis(result.P99PR), PPM: 5000}, "p99_pr<=0.5%"},
		{"p98_pr<=0", SLO{Stat: tier.StatAxis(result.P98PR), PPM: 0}, "p98_pr<=0%"},
		{"mean_pr<=100%", SLO{Stat: tier.StatAxis(result.MeanPR), PPM: 1000000}, "mean_pr<=100%"},
		{"max_pr<=0.0001%", SLO{Stat: tier.StatAxis(result.MaxPR), PPM: 1}, "max_pr<=0.0001%"},
	} {
		got, err := ParseSLO(tc.in)
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseSLO(%q) = %+v (%q), %v; want %+v (%q)", tc.in, got, got.String(), err, tc.want, tc.str)
		}
	}
}

func TestParseSLOErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `bad SLO "": want STAT<=RATE such as max_pr<=2% (only <= is supported)`},
		{"max_pr<2%", `bad SLO "max_pr<2%": want STAT<=RATE such as max_pr<=2% (only <= is supported)`},
		{"max_pr>=2%", `bad SLO "max_pr>=2%": want STAT<=RATE such as max_pr<=2% (only <= is supported)`},
		{"max_pr=2%", `bad SLO "max_pr=2%": want STAT<=RATE such as max_pr<=2% (only <= is supported)`},
		{"p50_pr<=2%", `bad SLO "p50_pr<=2%": unknown statistic "p50_pr" (known: max_pr, p99_pr, p98_pr, mean_pr)`},
		{"<=2%", `bad SLO "<=2%": unknown statistic "" (known: max_pr, p99_pr, p98_pr, mean_pr)`},
		{"max_pr<=", `bad SLO "max_pr<=": missing rate after <= (such as 2% or 0.02)`},
		{"max_pr<=2 %", `bad SLO "max_pr<=2 %": bad rate "2 %": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`},
		{"max_pr<=150%", `bad SLO "max_pr<=150%": rate 150% is out of range: want 0 to 100%`},
		{"max_pr<=-1%", `bad SLO "max_pr<=-1%": rate -1% is out of range: want 0 to 100%`},
		{"max_pr<=0.00001%", `bad SLO "max_pr<=0.00001%": rate 0.00001% is more precise than 1 ppm (0.0001%)`},
		{"max_pr<=<=2%", `bad SLO "max_pr<=<=2%": bad rate "<=2%": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`},
	} {
		_, err := ParseSLO(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseSLO(%q): got error %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestBrokenWindows(t *testing.T) {
	// PR per window: 0 (nothing accessed), 1/50 = 2% exactly, 3/149 > 2%,
	// 2/100 = 2%, 21/1000 > 2%.
	r := &result.Result{Promotions: []int64{0, 1, 3, 2, 21}, Accessed: []int64{0, 50, 149, 100, 1000}}
	slo := SLO{Stat: tier.StatAxis(result.MaxPR), PPM: 20000}
	if got := slo.BrokenWindows(r); got != 2 {
		t.Errorf("BrokenWindows = %d, want 2", got)
	}
	if slo.Meets(r) {
		t.Errorf("Meets = true with windows above 2%%")
	}
	if !slo.Meets(&result.Result{Promotions: []int64{1, 2}, Accessed: []int64{50, 100}}) {
		t.Errorf("Meets = false with every window at exactly 2%%")
	}
}

func TestSLOJSON(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(SLO{Stat: tier.StatAxis(result.P99PR), PPM: 5000}); err != nil {
		t.Fatal(err)
	}
	if b, want := buf.String(), `{"spec":"p99_pr<=0.5%","stat":"p99_pr","bound":0.005,"bound_ppm":5000}`+"\n"; b != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"max_pr<=2%", "p99_pr <= 0.005", "mean_pr<=", "x<=y", "max_pr<=100%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			return
		}
		back, err := ParseSLO(slo.String())
		if err != nil || back != slo {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, slo, slo.String(), back, err)
		}
	})
}
