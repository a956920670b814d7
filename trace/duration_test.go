package trace_test

import (
	"math"
	"testing"
	"time"

	"mdk/internal/testutil"
	"mdk/trace"
)

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{30 * time.Second, "30s"},
		{10 * time.Minute, "10m"},
		{time.Hour, "1h"},
		{25 * time.Hour, "25h"},
		{90 * time.Second, "90s"},
		{90 * time.Minute, "90m"},
		{1500 * time.Millisecond, "1500ms"},
		{time.Millisecond + time.Microsecond, "1001us"},
		{7, "7ns"},
		{-30 * time.Second, "-30s"},
		{math.MinInt64, "-9223372036854775808ns"},
		{math.MaxInt64, "9223372036854775807ns"},
	}
	for _, tc := range tests {
		if got := trace.FormatDuration(tc.d); got != tc.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", int64(tc.d), got, tc.want)
		}
	}
}

func TestFormatDurationRoundTrip(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 1))
	units := []time.Duration{1, time.Microsecond, time.Millisecond, time.Second, time.Minute, time.Hour}
	for range 10000 {
		u := units[rng.IntN(len(units))]
		d := time.Duration(rng.Int64N(math.MaxInt64/int64(u))) * u
		if rng.IntN(2) == 0 {
			d = -d
		}
		s := trace.FormatDuration(d)
		back, err := time.ParseDuration(s)
		if err != nil || back != d {
			t.Fatalf("FormatDuration(%d) = %q, parsed back as %d, %v", int64(d), s, int64(back), err)
		}
		if len(s) > len(d.String())+2 {
			t.Errorf("FormatDuration(%v) = %q is not compact", d, s)
		}
	}
}
