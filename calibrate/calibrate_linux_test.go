//go:build linux

package calibrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestZramSanity runs the real measurement on this machine's kernel with a
// zram device of its own (created and removed by Run): a swap-in must be
// slower than a touch of a resident page, and all-zero pages must take far
// less of the tier's memory than random ones. It skips when not root or
// without zram, except under CI=true (CI runs as root).
func TestZramSanity(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: sets up a zram device")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: sets up a zram swap device")
	}
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	if _, err := os.Stat(kernel.ZramControl()); errors.Is(err, os.ErrNotExist) {
		if out, err := exec.Command("modprobe", "zram", "num_devices=0").CombinedOutput(); err != nil {
			fail("no zram: modprobe zram: %v: %s", err, out)
		}
	}
	var created string
	logf := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if d, ok := strings.CutPrefix(msg, "calibrate: created "); ok {
			created = d
		}
		t.Log(msg)
	}
	tr, err := Run(context.Background(), Options{Tier: "zram", Setup: true, Pages: 1024, Contents: []string{"zero", "random"}, Content: "random", Log: logf})
	if err != nil {
		if strings.Contains(err.Error(), "already has priority") || strings.Contains(err.Error(), "zswap is enabled") {
			fail("%v", err)
		}
		t.Fatal(err)
	}
	// Run removed its device: neither swapped on nor present.
	after, _ := os.ReadFile("/proc/swaps")
	if created == "" {
		t.Fatal("Run did not say which device it created")
	}
	if strings.Contains(string(after), "/dev/"+created+" ") {
		t.Errorf("%s still swapped on:\n%s", created, after)
	}
	if _, err := os.Stat("/sys/block/" + created); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists: %v", created, err)
	}
	res := tr.ResidentTouchNs
	if res == nil || tr.PromotionNs.P50 <= res.P50 || tr.PromotionNs.Mean <= res.Mean {
		t.Errorf("swap-in p50 %v ns, mean %v ns; resident touch %+v: a swap-in should be slower", tr.PromotionNs.P50, tr.PromotionNs.Mean, res)
	}
	byName := map[string]float64{}
	for _, c := range tr.Contents {
		byName[c.Name] = c.StoredBytesPerPage()
		if c.Pages < 1024*9/10 {
			t.Errorf("%s: %d pages measured", c.Name, c.Pages)
		}
	}
	if zero, random := byName["zero"], byName["random"]; !(zero*10 < random) || random < 3000 {
		t.Errorf("tier memory per page: zero %v bytes, random %v: zero pages should take far less", zero, random)
	}
	if tr.StoredBytesPerPage != byName["random"] || tr.Content != "random" || !tr.Measured {
		t.Errorf("tier figures not those of --content random: %+v", tr)
	}
	t.Logf("swap-in %+v, resident %+v, stored zero %v random %v", tr.PromotionNs, *res, byName["zero"], byName["random"])
}

// TestRunNeedsSetup: without Setup nothing is created.
func TestRunNeedsSetup(t *testing.T) {
	_, err := Run(context.Background(), Options{Tier: "zram"})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("Run without Setup: %v", err)
	}
}
