package trace

import (
	"strconv"
	"time"
)

// durationUnits are the units FormatDuration may print, largest first. Each
// is accepted by time.ParseDuration.
var durationUnits = []struct {
	d    time.Duration
	name string
}{
	{time.Hour, "h"},
	{time.Minute, "m"},
	{time.Second, "s"},
	{time.Millisecond, "ms"},
	{time.Microsecond, "us"},
	{time.Nanosecond, "ns"},
}

// FormatDuration formats d compactly as an integer count of the largest unit
// that divides it exactly: 30s, 10m, 1h, 90s, 1500ms, 0s. The result is
// accepted by time.ParseDuration and gives back d exactly.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	for _, u := range durationUnits {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	panic("unreachable: every duration is a whole number of nanoseconds")
}
