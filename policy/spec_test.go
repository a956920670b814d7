package policy

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const w30 = 30 * time.Second

// ages returns AGE settings for the given A values.
func ages(as ...int) []Setting {
	var out []Setting
	for _, a := range as {
		out = append(out, AGE{A: a})
	}
	return out
}

func TestParse(t *testing.T) {
	tests := []struct {
		spec   string
		window time.Duration
		want   []Setting
	}{
		{"age:A=20", w30, ages(20)},
		{"age:A=0", w30, ages(0)},
		{"age:A=+3", w30, ages(3)},
		{"age:A=-0", w30, ages(0)},
		{"age:A=10m", w30, ages(20)},    // 600 s / 30 s
		{"age:A=1h30m", w30, ages(180)}, // 5400 s / 30 s
		{"age:A=90s", w30, ages(3)},
		{"age:A=0s", w30, ages(0)},
		{"age:A=500ms", 250 * time.Millisecond, ages(2)},
		{"age:A=1.5s", 500 * time.Millisecond, ages(3)},
		{"age:A=2147483647", w30, ages(MaxCount)},
		{"age:A=1|2|5", w30, ages(1, 2, 5)},
		{"age:A=5|1|2", w30, ages(5, 1, 2)}, // as written
		{"age:A=1..5", w30, ages(1, 2, 3, 4, 5)},
		{"age:A=3..3", w30, ages(3)},
		{"age:A=1..10/3", w30, ages(1, 4, 7, 10)},
		{"age:A=1..11/3", w30, ages(1, 4, 7, 10)}, // stops at or before the end
		{"age:A=1m..5m/1m", w30, ages(2, 4, 6, 8, 10)},
		{"age:A=0..2m/1m", w30, ages(0, 2, 4)},
		{"age:A=0..3|10..20/5", w30, ages(0, 1, 2, 3, 10, 15, 20)},
		{"age:A=0..3|2|1m", w30, ages(0, 1, 2, 3)}, // repeats kept once
		{" age : A = 1 | 2 ", w30, ages(1, 2)},
		{"vmin:T=0..2", w30, []Setting{VMIN{0}, VMIN{1}, VMIN{2}}},
		{"vmin:T=1m", time.Minute, []Setting{VMIN{1}}},
		{"opp:r=0.5%|1%|2%|5%", w30, []Setting{OPP{5000}, OPP{10000}, OPP{20000}, OPP{50000}}},
		{"opp:r=0.02", w30, []Setting{OPP{20000}}},
		{"opp:r=0|1|100%", w30, []Setting{OPP{0}, OPP{1000000}}},
		{"opp:r=0.000001|0.0001%", w30, []Setting{OPP{1}}},
		{"opp:r=0%..1%/0.25%", w30, []Setting{OPP{0}, OPP{2500}, OPP{5000}, OPP{7500}, OPP{10000}}},
		{"opp:r=0.01..0.03/0.01", w30, []Setting{OPP{10000}, OPP{20000}, OPP{30000}}},
		{"paw:P=5,wait=2", w30, []Setting{PAW{5, 2}}},
		{"paw:wait=0,P=4", w30, []Setting{PAW{4, 0}}},
		// Default wait: ceil(60 s / window).
		{"paw:P=5", w30, []Setting{PAW{5, 2}}},
		{"paw:P=5", 45 * time.Second, []Setting{PAW{5, 2}}},
		{"paw:P=5", time.Minute, []Setting{PAW{5, 1}}},
		{"paw:P=5", 7 * time.Second, []Setting{PAW{5, 9}}}, // 60/7 = 8.57
		{"paw:P=5", 2 * time.Minute, []Setting{PAW{5, 1}}},
		{"paw:P=5", time.Second, []Setting{PAW{5, 60}}},
		{"paw:P=inf", w30, []Setting{PAW{Inf, 2}}},
		{"paw:P=1|inf,wait=1m", w30, []Setting{PAW{1, 2}, PAW{Inf, 2}}},
		{"pace:P=3,A=2", w30, []Setting{PACE{3, 2}}},
		{"pace:P=inf,A=2", w30, []Setting{PACE{Inf, 2}}},
		// inf never reclaims: the last setting of the default grids.
		{"age:A=inf", w30, []Setting{AGE{Inf}}},
		{"vmin:T=3|inf", w30, []Setting{VMIN{3}, VMIN{Inf}}},
		{"pace:P=inf,A=inf", w30, []Setting{PACE{Inf, Inf}}},
		// Grid order: table key order (P, then A), first key outermost,
		// whatever order the keys are written in.
		{"pace:P=2|4,A=10|20", w30, []Setting{PACE{2, 10}, PACE{2, 20}, PACE{4, 10}, PACE{4, 20}}},
		{"pace:A=10|20,P=2|4", w30, []Setting{PACE{2, 10}, PACE{2, 20}, PACE{4, 10}, PACE{4, 20}}},
		{"age", w30, DefaultGrid("age", w30)},
		{"pace", time.Second, DefaultGrid("pace", time.Second)},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := Parse(tc.spec, tc.window)
			if err != nil {
				t.Fatalf("Parse(%q, %v): %v", tc.spec, tc.window, err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Parse(%q, %v) mismatch (-want +got):\n%s", tc.spec, tc.window, d)
			}
		})
	}
}

func TestParseGridSize(t *testing.T) {
	got, err := Parse("pace:P=2..20/2,A=10|20", w30)
	if err != nil {
		t.Fatal(err)
	}
	// P = 2, 4, ..., 20 (10 values) x A = 10, 20.
	if len(got) != 20 {
		t.Fatalf("got %d settings, want 20", len(got))
	}
	if got[0] != (PACE{2, 10}) || got[1] != (PACE{2, 20}) || got[19] != (PACE{20, 20}) {
		t.Errorf("grid order: got %v, %v ... %v", got[0], got[1], got[19])
	}
	// Exactly the limit is fine.
	got, err = Parse("age:A=1..100000", w30)
	if err != nil || len(got) != MaxGrid {
		t.Errorf("age:A=1..100000: %d settings, %v", len(got), err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		spec   string
		window time.Duration
		want   string
	}{
		{"age:A=45s", w30, "age:A=45s: 45s is not a whole number of 30s windows"},
		{"age:A=1|45s", w30, "age:A=1|45s: 45s is not a whole number of 30s windows"},
		{"paw:P=5,wait=45s", w30, "paw:wait=45s: 45s is not a whole number of 30s windows"},
		{"age:A=1m", 7 * time.Second, "age:A=1m: 1m is not a whole number of 7s windows"},
		{"age:A=1s", 1500 * time.Millisecond, "age:A=1s: 1s is not a whole number of 1500ms windows"},
		{"", w30, `"": empty policy spec (want NAME or NAME:KEY=VALUE,...; policies: age, vmin, opp, paw, pace, lopp, lru)`},
		{"  ", w30, `"": empty policy spec (want NAME or NAME:KEY=VALUE,...; policies: age, vmin, opp, paw, pace, lopp, lru)`},
		{"foo:A=1", w30, `foo:A=1: unknown policy "foo" (known: age, vmin, opp, paw, pace, lopp, lru)`},
		{"AGE:A=1", w30, `AGE:A=1: unknown policy "AGE" (known: age, vmin, opp, paw, pace, lopp, lru)`},
		{"foo", w30, `foo: unknown policy "foo" (known: age, vmin, opp, paw, pace, lopp, lru)`},
		{"age:A=1", 0, "age:A=1: window length must be positive, got 0s"},
		{"age:B=1", w30, `age:B=1: unknown key "B" (age keys: A)`},
		{"age:a=1", w30, `age:a=1: unknown key "a" (age keys: A)`},
		{"pace:P=1,T=2", w30, `pace:T=2: unknown key "T" (pace keys: P, A)`},
		{"age:", w30, `age:: want KEY=VALUE after "age:" (age keys: A)`},
		{"age:A", w30, `age:A: want KEY=VALUE, got "A"`},
		{"age:A=1,A=2", w30, `age:A=2: duplicate key "A"`},
		{"age:A=1,", w30, "age:A=1,: empty parameter (want KEY=VALUE,KEY=VALUE)"},
		{"age:,A=1", w30, "age:,A=1: empty parameter (want KEY=VALUE,KEY=VALUE)"},
		{"paw:wait=2", w30, `paw:wait=2: missing key "P" (paw keys: P, wait)`},
		{"pace:P=1", w30, `pace:P=1: missing key "A" (pace keys: P, A)`},
		{"age:A=-1", w30, "age:A=-1: A must be >= 0, got -1"},
		{"age:A=-99999999999999999999", w30, "age:A=-99999999999999999999: A must be >= 0, got -99999999999999999999"},
		{"age:A=-1m", w30, "age:A=-1m: A must be >= 0, got -1m"},
		{"age:A=2147483648", w30, "age:A=2147483648: A must be at most 2147483647 windows, got 2147483648"},
		{"age:A=99999999999999999999", w30, "age:A=99999999999999999999: A must be at most 2147483647 windows, got 99999999999999999999"},
		{"age:A=2000000000m", time.Minute, "age:A=2000000000m: bad value \"2000000000m\" for A: want a number of windows or a duration such as 90s or 10m, or inf"},
		{"age:A=2147483648s", time.Second, "age:A=2147483648s: A must be at most 2147483647 windows, got 2147483648s (2147483648 windows)"},
		{"paw:P=1,wait=inf", w30, "paw:wait=inf: wait cannot be inf"},
		{"age:A=abc", w30, `age:A=abc: bad value "abc" for A: want a number of windows or a duration such as 90s or 10m, or inf`},
		{"age:A=1.5", w30, `age:A=1.5: bad value "1.5" for A: want a number of windows or a duration such as 90s or 10m, or inf`},
		{"paw:P=x", w30, `paw:P=x: bad value "x" for P: want a number of windows or a duration such as 90s or 10m, or inf`},
		{"age:A=", w30, "age:A=: empty value for A"},
		{"age:A=1||2", w30, `age:A=1||2: empty element in list "1||2"`},
		{"age:A=1|", w30, `age:A=1|: empty element in list "1|"`},
		{"age:A=10..5", w30, `age:A=10..5: bad range "10..5": end is less than start`},
		{"age:A=1..5/0", w30, `age:A=1..5/0: bad range "1..5/0": step must be positive`},
		{"age:A=1..5/-1", w30, `age:A=1..5/-1: bad range "1..5/-1": step must be positive`},
		{"age:A=1..5/0s", w30, `age:A=1..5/0s: bad range "1..5/0s": step must be positive`},
		{"age:A=1..inf", w30, `age:A=1..inf: bad range "1..inf": inf cannot be a range bound`},
		{"age:A=..5", w30, `age:A=..5: bad range "..5": bad value "" for A: want a number of windows or a duration such as 90s or 10m, or inf`},
		{"age:A=1..2..3", w30, `age:A=1..2..3: bad range "1..2..3": bad value "2..3" for A: want a number of windows or a duration such as 90s or 10m, or inf`},
		{"age:A=1m..2m/45s", w30, `age:A=1m..2m/45s: bad range "1m..2m/45s": 45s is not a whole number of 30s windows`},
		{"age:A=0..1000000", w30, `age:A=0..1000000: bad range "0..1000000": 1000001 values, more than the grid limit of 100000`},
		{"age:A=0..100000", w30, "age:A=0..100000: grid too large: 100001 settings (limit 100000)"},
		{"age:A=0..50000|50001..100000", w30, "age:A=0..50000|50001..100000: grid too large: 100001 settings (limit 100000)"},
		{"pace:P=0..999,A=0..999", w30, "pace:P=0..999,A=0..999: grid too large: 1000 x 1000 = 1000000 settings (limit 100000)"},
		{"opp:r=101%", w30, "opp:r=101%: r must be between 0 and 100%, got 101%"},
		{"opp:r=1.5", w30, "opp:r=1.5: r must be between 0 and 100%, got 1.5"},
		{"opp:r=-1%", w30, "opp:r=-1%: r must be between 0 and 100%, got -1%"},
		{"opp:r=99999999999999999999%", w30, "opp:r=99999999999999999999%: r must be between 0 and 100%, got 99999999999999999999%"},
		{"opp:r=0.00001%", w30, "opp:r=0.00001%: rate 0.00001% is more precise than 1 ppm (0.0001%)"},
		{"opp:r=0.0000001", w30, "opp:r=0.0000001: rate 0.0000001 is more precise than 1 ppm (0.0001%)"},
		{"opp:r=2 %", w30, `opp:r=2 %: bad rate "2 %": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`},
		{"opp:r=inf", w30, `opp:r=inf: bad rate "inf": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`},
		{"opp:r=1e-2", w30, `opp:r=1e-2: bad rate "1e-2": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`},
		{"opp:r=0%..5%", w30, `opp:r=0%..5%: bad range "0%..5%": a rate range needs a step, as in 0%..5%/0.5%`},
		{"opp:r=5%..1%/1%", w30, `opp:r=5%..1%/1%: bad range "5%..1%/1%": end is less than start`},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := Parse(tc.spec, tc.window)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want error %q", tc.spec, got, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Parse(%q) error:\n got %s\nwant %s", tc.spec, err, tc.want)
			}
		})
	}
}

// floatSetting stands in for a policy with a float key (lopp's theta) to
// test the Float key kind through the table.
type floatSetting struct{ theta float64 }

func (s floatSetting) Policy() string { return "testfloat" }
func (s floatSetting) Params() string {
	return "theta=" + strconv.FormatFloat(s.theta, 'g', -1, 64)
}
func (s floatSetting) NewDecider([]int64) Decider { return nil }

func withFloatPolicy(t *testing.T) {
	t.Helper()
	old := defs
	defs = append(append([]*Def(nil), defs...), &Def{
		Name: "testfloat",
		Keys: []Key{{Name: "theta", Kind: Float, Min: 0, Max: 1}},
		New:  func(v []Value) Setting { return floatSetting{v[0].Float} },
		Grid: func(time.Duration) []Setting { return []Setting{floatSetting{0.5}} },
	})
	t.Cleanup(func() { defs = old })
}

func TestParseFloatKey(t *testing.T) {
	withFloatPolicy(t)
	got, err := Parse("testfloat:theta=0|0.25|1|.5|0.25", w30)
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{floatSetting{0}, floatSetting{0.25}, floatSetting{1}, floatSetting{0.5}}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(floatSetting{})); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
	for _, s := range got {
		checkRoundTrip(t, s, w30)
	}
	for spec, msg := range map[string]string{
		"testfloat:theta=1.5":    "testfloat:theta=1.5: theta must be between 0 and 1, got 1.5",
		"testfloat:theta=-0.1":   "testfloat:theta=-0.1: theta must be between 0 and 1, got -0.1",
		"testfloat:theta=NaN":    `testfloat:theta=NaN: bad value "NaN" for theta: want a decimal number`,
		"testfloat:theta=0x1p-1": `testfloat:theta=0x1p-1: bad value "0x1p-1" for theta: want a decimal number`,
		"testfloat:theta=0..1":   `testfloat:theta=0..1: bad range "0..1": theta takes no ranges, use a list such as 0.1|0.2|0.3`,
	} {
		if _, err := Parse(spec, w30); err == nil || err.Error() != msg {
			t.Errorf("Parse(%q) error:\n got %v\nwant %s", spec, err, msg)
		}
	}
}

// checkRoundTrip checks that a setting's spec parses back to it alone.
func checkRoundTrip(t testing.TB, s Setting, window time.Duration) {
	t.Helper()
	spec := String(s)
	got, err := Parse(spec, window)
	if err != nil {
		t.Fatalf("%#v: Parse(%q): %v", s, spec, err)
	}
	if len(got) != 1 || got[0] != s {
		t.Fatalf("%#v: Parse(%q) = %#v, want the setting back", s, spec, got)
	}
}

func TestRoundTrip(t *testing.T) {
	specs := []string{
		"age:A=0..300", "vmin:T=0..300", "opp:r=0%..100%/0.0125%",
		"paw:P=0..40|inf,wait=0..5", "pace:P=0..40|inf,A=0..40",
		"age", "vmin", "opp", "paw", "pace",
	}
	for _, window := range []time.Duration{time.Second, 7 * time.Second, w30, time.Minute, 10 * time.Minute} {
		for _, spec := range specs {
			settings, err := Parse(spec, window)
			if err != nil {
				t.Fatalf("Parse(%q): %v", spec, err)
			}
			for _, s := range settings {
				checkRoundTrip(t, s, window)
			}
		}
	}
}

func TestParseRate(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"2%", 20000}, {"0.5%", 5000}, {".5%", 5000}, {"00.50%", 5000}, {"0.02", 20000},
		{"100%", 1000000}, {"1", 1000000}, {"1.000000000", 1000000}, {"0", 0}, {"0%", 0},
		{"-0%", 0}, {"0.000001", 1}, {"0.0001%", 1}, {"12.3456%", 123456}, {"0.123456", 123456},
		{" 1% ", 10000},
	}
	for _, tc := range good {
		got, err := ParseRate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	bad := map[string]string{
		"":          `bad rate "": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`,
		"%":         `bad rate "%": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`,
		"5.%":       `bad rate "5.%": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`,
		"1%%":       `bad rate "1%%": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`,
		"abc":       `bad rate "abc": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`,
		"--1%":      `bad rate "--1%": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`,
		"1.5":       "rate 1.5 is out of range: want 0 to 100%",
		"100.0001%": "rate 100.0001% is out of range: want 0 to 100%",
		"-1%":       "rate -1% is out of range: want 0 to 100%",
		"0.0000001": "rate 0.0000001 is more precise than 1 ppm (0.0001%)",
	}
	for in, want := range bad {
		if got, err := ParseRate(in); err == nil || err.Error() != want {
			t.Errorf("ParseRate(%q) = %d, %v; want error %q", in, got, err, want)
		}
	}
}

// TestParseRateFormatRate checks rates from 0 to 100% (every ppm up to 2%,
// then every 7th) against FormatRate, and against the same rate written as
// a fraction.
func TestParseRateFormatRate(t *testing.T) {
	for ppm := int64(0); ppm <= MaxPPM; ppm += map[bool]int64{true: 1, false: 7}[ppm < 20000] {
		s := FormatRate(ppm)
		got, err := ParseRate(s)
		if err != nil || got != ppm {
			t.Fatalf("ParseRate(FormatRate(%d) = %q) = %d, %v", ppm, s, got, err)
		}
		frac := strconv.FormatInt(ppm/1e6, 10) + "." + strings.TrimPrefix(strconv.FormatInt(1e6+ppm%1e6, 10), "1")
		if got, err := ParseRate(frac); err != nil || got != ppm {
			t.Fatalf("ParseRate(%q) = %d, %v; want %d", frac, got, err, ppm)
		}
	}
}

func TestParseRates(t *testing.T) {
	got, err := ParseRates("1%, 2%,0.05")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int64{10000, 20000, 50000}, got); d != "" {
		t.Errorf("mismatch (-want +got):\n%s", d)
	}
	for in, want := range map[string]string{
		"1%,,2%": `empty rate in list "1%,,2%"`,
		"":       `empty rate in list ""`,
		"1%,x":   `bad rate "x": want a percentage such as 2% or 0.5%, or a fraction such as 0.02`,
	} {
		if _, err := ParseRates(in); err == nil || err.Error() != want {
			t.Errorf("ParseRates(%q) error = %v, want %q", in, err, want)
		}
	}
}

// fuzzWindow maps a fuzz input to a window length: 10 ms steps.
func fuzzWindow(w uint16) time.Duration { return time.Duration(int(w)+1) * 10 * time.Millisecond }

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"age:A=20", "age:A=1..60", "vmin:T=0..30", "opp:r=0.5%|1%|2%|5%", "paw:P=5,wait=2",
		"pace:P=2..20/2,A=10|20", "age:A=10m", "age:A=45s", "pace:P=inf,A=2", "opp:r=0.02",
		"opp:r=0%..1%/0.25%", "age:A=1m..10m/1m", "paw:P=inf", "age", "opp", "pace", "foo:A=1",
		"age:A=1||2", "age:A=10..5", "age:A=1..5/0", "paw:wait=2", "age:A=1,A=2",
	} {
		f.Add(s, uint16(2999)) // 30 s
		f.Add(s, uint16(99))   // 1 s
	}
	f.Fuzz(func(t *testing.T, spec string, w uint16) {
		window := fuzzWindow(w)
		settings, err := Parse(spec, window)
		if err != nil {
			if settings != nil {
				t.Fatalf("Parse(%q) returned settings with error %v", spec, err)
			}
			return
		}
		if len(settings) == 0 || len(settings) > MaxGrid {
			t.Fatalf("Parse(%q): %d settings", spec, len(settings))
		}
		// Round-trip the first settings and the last (a grid may be large).
		for i, s := range settings {
			if i < 50 || i == len(settings)-1 {
				checkRoundTrip(t, s, window)
			}
		}
	})
}

func TestCountLadder(t *testing.T) {
	// 30 s windows: M = 2 h / 30 s = 240, s = 8 steps per octave, as
	// documented in grid.go.
	want := []int{
		0, 1, 2, 3, 4, 5, 6, 7, // 0..s-1
		8, 9, 10, 11, 12, 13, 14, 15, // step 1
		16, 18, 20, 22, 24, 26, 28, 30, // step 2
		32, 36, 40, 44, 48, 52, 56, 60, // step 4
		64, 72, 80, 88, 96, 104, 112, 120, // step 8
		128, 144, 160, 176, 192, 208, 224, 240, // step 16, ends at M
	}
	if d := cmp.Diff(want, countLadder(w30)); d != "" {
		t.Errorf("30s ladder mismatch (-want +got):\n%s", d)
	}
	// 5 min windows: M = max(24, 49) = 49, every integer.
	var all []int
	for i := 0; i <= 49; i++ {
		all = append(all, i)
	}
	if d := cmp.Diff(all, countLadder(5*time.Minute)); d != "" {
		t.Errorf("5m ladder mismatch (-want +got):\n%s", d)
	}
	for _, w := range []time.Duration{10 * time.Millisecond, time.Second, 7 * time.Second, 10 * time.Second, w30, time.Minute, 147 * time.Second, time.Hour} {
		l := countLadder(w)
		m := int((2*time.Hour + w - 1) / w)
		m = max(m, 49)
		if l[0] != 0 || l[len(l)-1] != m {
			t.Errorf("%v: ladder runs %d..%d, want 0..%d", w, l[0], l[len(l)-1], m)
		}
		for i := 1; i < len(l); i++ {
			if l[i] <= l[i-1] {
				t.Errorf("%v: ladder not increasing at %d: %v", w, i, l)
			}
		}
		if len(l) < 35 || len(l) > 65 {
			t.Errorf("%v: ladder has %d values, want about 50", w, len(l))
		}
	}
}

func TestDefaultGrids(t *testing.T) {
	if g := DefaultGrid("nope", w30); g != nil {
		t.Errorf("DefaultGrid(nope) = %v, want nil", g)
	}
	opp := DefaultGrid("opp", w30)
	seen := map[int64]bool{}
	for i, s := range opp {
		seen[s.(OPP).PPM] = true
		if i > 0 && s.(OPP).PPM <= opp[i-1].(OPP).PPM {
			t.Errorf("opp grid not increasing at %d", i)
		}
	}
	for _, r := range []int64{0, 5000, 10000, 20000, 50000, 200000} {
		if !seen[r] {
			t.Errorf("opp grid lacks %s", FormatRate(r))
		}
	}
	if len(opp) < 45 || len(opp) > 55 {
		t.Errorf("opp grid has %d settings, want about 50", len(opp))
	}
	for _, w := range []time.Duration{time.Second, w30, 45 * time.Second} {
		ladder := countLadder(w)
		for _, name := range []string{"age", "vmin"} {
			g := DefaultGrid(name, w)
			if len(g) != len(ladder)+1 {
				t.Errorf("%s grid at %v has %d settings, want the ladder's %d and inf", name, w, len(g), len(ladder))
			}
			var never Setting = AGE{Inf}
			if name == "vmin" {
				never = VMIN{Inf}
			}
			if g[len(g)-1] != never {
				t.Errorf("%s grid at %v ends with %v, want %v (never reclaims)", name, w, g[len(g)-1], never)
			}
		}
		// paw: 9 P values x the whole ladder of waits, P outer, then the
		// setting that never reclaims; its P = 0 row is age's grid.
		ps := pick(ladder, 9)
		paw := DefaultGrid("paw", w)
		if len(paw) != 9*len(ladder)+1 || paw[len(paw)-1] != (PAW{Inf, DefaultWait(w)}) {
			t.Fatalf("paw grid at %v has %d settings ending %v, want 9 x %d and P=inf,wait=%d last", w, len(paw), paw[len(paw)-1], len(ladder), DefaultWait(w))
		}
		for i, s := range paw[:len(paw)-1] {
			if want := (PAW{P: ps[i/len(ladder)], Wait: ladder[i%len(ladder)]}); s != want {
				t.Errorf("paw grid at %v: setting %d is %v, want %v", w, i, s, want)
			}
		}
		if ps[0] != 0 {
			t.Errorf("paw grid at %v: first P %d, want 0 (age)", w, ps[0])
		}
		// pace: the same P values and inf x the whole ladder of A, P outer,
		// then P=inf,A=inf; its P = inf row is age's grid.
		pace := DefaultGrid("pace", w)
		if len(pace) != 10*len(ladder)+1 || pace[len(pace)-1] != (PACE{Inf, Inf}) {
			t.Fatalf("pace grid at %v has %d settings, want 10 x %d and P=inf,A=inf last", w, len(pace), len(ladder))
		}
		for i, s := range pace[:len(pace)-1] {
			p := Inf
			if i/len(ladder) < 9 {
				p = ps[i/len(ladder)]
			}
			if want := (PACE{P: p, A: ladder[i%len(ladder)]}); s != want {
				t.Errorf("pace grid at %v: setting %d is %v, want %v", w, i, s, want)
			}
		}
	}
}

// TestPAWZeroIsAge: d >= 1 on every touch (Inf on a life's first), so paw
// with P = 0 reclaims exactly when age with A = wait does: the default
// grid's P = 0 row is age's grid (docs/policies.md).
func TestPAWZeroIsAge(t *testing.T) {
	for _, a := range countLadder(w30) {
		paw, age := PAW{P: 0, Wait: a}, AGE{A: a}
		for last := 0; last < 50; last++ {
			for _, prior := range []int{1, 2, 3, 7, 100, Inf} {
				for now := last; now < last+300; now++ {
					s := &PageState{Now: now, LastTouch: last, Prior: prior}
					if paw.Reclaim(s) != age.Reclaim(s) {
						t.Fatalf("%v and %v differ at %+v", paw, age, *s)
					}
				}
			}
		}
	}
}
