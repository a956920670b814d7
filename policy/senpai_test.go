package policy

import (
	"fmt"
	"testing"
	"time"
)

// TestParseSenpai: the defaults are senpai.py's, every key parses in its
// units, Params round-trips, and mistakes name the key.
func TestParseSenpai(t *testing.T) {
	s, err := ParseSenpai("senpai")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Params(), "pressure=10ms,interval=6s,max_probe=0.01,max_backoff=1,coeff_probe=10,coeff_backoff=20,min_size=100M,max_size=100G"; got != want {
		t.Errorf("defaults %s, want %s", got, want)
	}
	s, err = ParseSenpai("senpai: pressure=5000, interval=12, max_probe=2%, max_backoff=0.5, coeff_probe=4, coeff_backoff=8, min_size=1G, max_size=2147483648, swapin_ns=10533.5")
	if err != nil {
		t.Fatal(err)
	}
	if s.PressureUS != 5000 || s.Interval != 12*time.Second || s.MaxProbe != 0.02 || s.MaxBackoff != 0.5 ||
		s.CoeffProbe != 4 || s.CoeffBackoff != 8 || s.MinSize != 1<<30 || s.MaxSize != 2<<30 || s.PromotionNS != 10533.5 {
		t.Errorf("parsed %+v", s)
	}
	back, err := ParseSenpai("senpai:" + s.Params())
	if err != nil || *back != *s {
		t.Errorf("round trip of %s: %+v, %v", s.Params(), back, err)
	}
	for _, tc := range []struct{ spec, want string }{
		{"senpai:pressure=0", "senpai:pressure=0: pressure must be positive"},
		{"senpai:interval=-1s", "senpai:interval=-1s: interval must be positive"},
		{"senpai:max_probe=2", "senpai:max_probe=2: 2 is out of range (0 to 1)"},
		{"senpai:min_size=1X", `senpai:min_size=1X: bad size "1X": want bytes, or with a suffix K, M, G or T (100M)`},
		{"senpai:min_size=2G,max_size=1G", "senpai:min_size=2G,max_size=1G: min_size 2G is above max_size 1G"},
		{"senpai:pressure=1ms|2ms", "senpai:pressure=1ms|2ms: senpai takes one value per key (a controller is one setting)"},
		{"senpai:foo=1", "senpai:foo=1: unknown key \"foo\" (senpai keys: " + senpaiKeys + ")"},
		{"senpai:swapin_ns=0", `senpai:swapin_ns=0: bad value "0": want a positive number of nanoseconds`},
	} {
		if _, err := ParseSenpai(tc.spec); fmt.Sprint(err) != tc.want {
			t.Errorf("%s: err %v, want %s", tc.spec, err, tc.want)
		}
	}
}
