package tune

import (
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Range
	}{
		{"0..119", Range{0, 119}},
		{" 5 .. 5 ", Range{5, 5}},
		{"007..10", Range{7, 10}},
	} {
		got, err := ParseRange(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRangeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `bad window range "": want FIRST..LAST such as 0..119 (inclusive)`},
		{"12", `bad window range "12": want FIRST..LAST such as 0..119 (inclusive)`},
		{"0-119", `bad window range "0-119": want FIRST..LAST such as 0..119 (inclusive)`},
		{"..5", `bad window range "..5": "" is not a window number (want a non-negative integer)`},
		{"5..", `bad window range "5..": "" is not a window number (want a non-negative integer)`},
		{"-1..5", `bad window range "-1..5": "-1" is not a window number (want a non-negative integer)`},
		{"1m..5m", `bad window range "1m..5m": "1m" is not a window number (want a non-negative integer)`},
		{"0..1..2", `bad window range "0..1..2": "1..2" is not a window number (want a non-negative integer)`},
		{"9..3", `bad window range "9..3": last window 3 is before first window 9`},
		{"0..99999999999", `bad window range "0..99999999999": window 99999999999 is too large`},
	} {
		_, err := ParseRange(tc.in)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseRange(%q): got error %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"0..119", "5..5", "9..3", "..", "1..2..3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			return
		}
		if r.First < 0 || r.Last < r.First || r.Len() < 1 {
			t.Fatalf("%q -> invalid %+v", s, r)
		}
		back, err := ParseRange(r.String())
		if err != nil || back != r {
			t.Fatalf("%q -> %v -> %v, %v", s, r, back, err)
		}
	})
}
