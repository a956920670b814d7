package cli

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/result"
	"mdk/tier"
)

// quarterTier writes a tier file whose stored pages cost a quarter page and
// whose promotions cost 5 us (as tier's tests), and returns its path.
func quarterTier(t *testing.T) string {
	t.Helper()
	q := tier.Tier{Name: "quarter", Source: "test figures", PageSizeBytes: 4096, StoredBytesPerPage: 1024, PromotionNs: tier.Latency{Mean: 5000}}
	path := filepath.Join(t.TempDir(), "quarter.json")
	if err := q.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTierGolden runs mdk mpc with --tier (a file and a built-in) and its
// errors against golden files.
func TestTierGolden(t *testing.T) {
	q := quarterTier(t)
	cases := []struct {
		name string
		args []string
	}{
		{"mpc-tier-csv", []string{"mpc", example, "-p", "age:A=1..3", "-p", "opp:r=25%|50%", "--tier", q, "--csv"}},
		{"mpc-tier-json", []string{"mpc", example, "-p", "vmin:T=0", "--tier", q, "--json"}},
		{"mpc-tier-table", []string{"mpc", example, "-p", "age:A=0..3", "-p", "opp:r=0|25%|50%", "--tier", "ssd", "--x", "slowdown", "--target", "0.0001%,1%"}},
		{"mpc-tier-builtin", []string{"mpc", example, "-p", "age:A=1", "--tier", "ssd", "--target", "50%"}},
		{"err-mpc-tier-x", []string{"mpc", example, "--x", "slowdown"}},
		{"err-mpc-tier-unknown", []string{"mpc", example, "--tier", "nvme"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, "", tc.args...)
			args := strings.ReplaceAll(strings.Join(tc.args, " "), q, "quarter.json")
			got := fmt.Sprintf("$ mdk %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", args, code, out, strings.ReplaceAll(errs, q, "quarter.json"))
			testutil.Golden(t, tc.name+".golden", []byte(got))
		})
	}
}

// TestTierCSVKeepsSPECColumns checks that --tier only appends columns: the
// first eleven of every row are mdk mpc --csv's without it.
func TestTierCSVKeepsSPECColumns(t *testing.T) {
	q := quarterTier(t)
	var specs []string
	for _, r := range testutil.SpecTable {
		specs = append(specs, "-p", r.Spec)
	}
	_, plain, _ := run(t, "", append([]string{"mpc", example, "--csv"}, specs...)...)
	code, with, errs := run(t, "", append([]string{"mpc", example, "--csv", "--tier", q}, specs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	pr, _ := csv.NewReader(strings.NewReader(plain)).ReadAll()
	wr, err := csv.NewReader(strings.NewReader(with)).ReadAll()
	if err != nil || len(wr) != len(pr) || len(pr) != len(testutil.SpecTable)+1 {
		t.Fatalf("%d rows with --tier, %d without: %v", len(wr), len(pr), err)
	}
	for i := range pr {
		if got, want := strings.Join(wr[i][:len(result.CSVHeader)], ","), strings.Join(pr[i], ","); got != want {
			t.Errorf("row %d: %s, want %s", i, got, want)
		}
	}
}

// TestTierPlot draws net savings against slowdown.
func TestTierPlot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "net.svg")
	code, _, errs := run(t, "", "mpc", example, "-p", "age:A=0..3", "--tier", "zram", "--x", "slowdown", "--plot", path, "--csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"slowdown", "net savings", "zram"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("plot has no %q", want)
		}
	}
}
