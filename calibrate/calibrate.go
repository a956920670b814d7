package calibrate

import (
	"errors"
	"fmt"
	"strings"
)

// Options say what to measure and what calibrate may set up.
type Options struct {
	// Tier is "zram" or "swapfile" ("zswap" is refused on a host: turning
	// it on changes every swap device of the machine).
	Tier string
	// Setup allows creating the device (a zram device through
	// /sys/class/zram-control, or a swap file in Dir) and swapping on it;
	// without it Run changes nothing and returns an error saying so.
	Setup bool
	// Pages is the number of pages measured per content (default
	// DefaultPages, at most MaxPages).
	Pages int
	// Contents are the synthetic contents to measure (default every one
	// of Contents); Content is the one whose figures the tier takes
	// (default DefaultContent; with PID, the process's sample).
	Contents []string
	Content  string
	// PID, if not 0, is a live process whose anonymous pages are sampled
	// (read through /proc/PID/mem, never written) and measured as one more
	// content; PIDPages is the sample's size (default DefaultPIDPages).
	PID      int
	PIDPages int
	// Algorithm is zram's compressor ("" keeps the kernel's default).
	Algorithm string
	// Dir is where a swap file is created (swapfile only).
	Dir string
	// Seed seeds the synthetic contents and the page order.
	Seed uint64
	// Log, if set, receives progress messages.
	Log func(format string, args ...any)
}

// Limits and defaults.
const (
	DefaultPages    = 16384 // 64 MiB of 4 KiB pages per content
	MaxPages        = 262144
	DefaultPIDPages = 4096
	MaxPIDPages     = 65536
	// Priority is the swap priority of calibrate's device: the highest, so
	// the kernel puts the pages calibrate reclaims there and not on another
	// swap device (it refuses to run if another device has it too).
	Priority = 32767
)

// withDefaults fills the defaults and checks the options.
func (o Options) withDefaults() (Options, error) {
	if o.Pages == 0 {
		o.Pages = DefaultPages
	}
	if o.Pages < 64 || o.Pages > MaxPages {
		return o, fmt.Errorf("calibrate: %d pages per content: want 64 to %d", o.Pages, MaxPages)
	}
	if o.PIDPages == 0 {
		o.PIDPages = DefaultPIDPages
	}
	if o.PIDPages < 64 || o.PIDPages > MaxPIDPages {
		return o, fmt.Errorf("calibrate: %d sampled pages: want 64 to %d", o.PIDPages, MaxPIDPages)
	}
	if len(o.Contents) == 0 {
		for _, c := range Contents {
			o.Contents = append(o.Contents, c.Name)
		}
	}
	for _, c := range o.Contents {
		if _, err := contentNamed(c); err != nil {
			return o, fmt.Errorf("calibrate: %w", err)
		}
	}
	if o.Content == "" && o.PID == 0 {
		o.Content = DefaultContent
		if !contains(o.Contents, o.Content) {
			o.Content = o.Contents[0]
		}
	}
	if o.Content != "" && !contains(o.Contents, o.Content) {
		return o, fmt.Errorf("calibrate: content %q is not among the measured ones (%s)", o.Content, strings.Join(o.Contents, ", "))
	}
	switch o.Tier {
	case "zram", "swapfile":
	case "zswap":
		return o, errors.New("calibrate: zswap is not measured on a host: enabling it changes every swap device of the machine; measure it in a guest, or use the built-in zswap figures (docs/tiers.md)")
	default:
		return o, fmt.Errorf("calibrate: tier %q: want zram, swapfile or zswap", o.Tier)
	}
	if o.Tier == "swapfile" && o.Dir == "" {
		return o, errors.New("calibrate: --tier swapfile needs --dir, a directory on the disk to measure (not tmpfs)")
	}
	return o, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Plan describes what Run would do with o, without doing it.
func Plan(o Options) (string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	switch o.Tier {
	case "zram":
		fmt.Fprintf(&b, "create a zram device (cat /sys/class/zram-control/hot_add)")
		if o.Algorithm != "" {
			fmt.Fprintf(&b, " with compressor %s", o.Algorithm)
		}
		fmt.Fprintf(&b, " of %d MiB, mkswap it and swapon it at priority %d\n", deviceBytes(o)>>20, Priority)
	case "swapfile":
		fmt.Fprintf(&b, "create a %d MiB swap file in %s, mkswap it and swapon it at priority %d\n", deviceBytes(o)>>20, o.Dir, Priority)
	}
	fmt.Fprintf(&b, "for each content (%s): map %d pages (%d MiB) in this process, fill them, reclaim them with madvise(MADV_PAGEOUT), then time a touch of each (a swap-in) and a second touch (resident)\n",
		strings.Join(o.Contents, ", "), o.Pages, o.Pages*4096>>20)
	if o.PID != 0 {
		fmt.Fprintf(&b, "sample up to %d present anonymous pages of process %d through /proc/%d/mem (read only) and measure them the same way\n", o.PIDPages, o.PID, o.PID)
	}
	fmt.Fprintf(&b, "then swapoff the device and remove it (%s)\n", map[string]string{"zram": "echo N > /sys/class/zram-control/hot_remove", "swapfile": "delete the file"}[o.Tier])
	return b.String(), nil
}

// deviceBytes is the size of the device calibrate creates: room for the
// largest content twice, plus slack.
func deviceBytes(o Options) int64 {
	n := max(o.Pages, o.PIDPages)
	return int64(n)*4096*2 + 64<<20
}
