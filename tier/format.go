package tier

import (
	"fmt"
	"strconv"
)

// The units a tier's numbers are printed in, by every command that prints
// them (mdk mpc's and tune's tables, agent compare's tier section,
// calibrate).

// FormatPercent prints a fraction as a percentage with 4 significant digits
// (a slowdown is often far below 0.01%): 0.00123456 is "0.1235%".
func FormatPercent(f float64) string { return strconv.FormatFloat(100*f, 'g', 4, 64) + "%" }

// FormatBytes prints a byte count with a binary unit ("1.5 GiB").
func FormatBytes(x float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", x, units[i])
}

// FormatSeconds prints a time in seconds with a readable unit ("2us",
// "1.5ms"), 3 significant digits.
func FormatSeconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-6:
		return fmt.Sprintf("%.3gns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.3gus", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.3gms", s*1e3)
	}
	return fmt.Sprintf("%.3gs", s)
}

// FormatNs prints a time in nanoseconds as FormatSeconds does.
func FormatNs(ns float64) string { return FormatSeconds(ns / 1e9) }
