package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// regionsTrace is a trace with pages in a heap mapping, an anonymous one
// and none, and its sidecar (docs/trace-format.md).
const (
	regionsTrace = `mdk-trace 1
windows 6
0 a 0x400 0x401 0x7f000 0x9000
1 a 0x400
2 a 0x400
5 a 0x400 0x401
`
	regionsMaps = `mdk-maps 1
0 0 400000 402000 rw-p 0 [heap]
0 0 7f000000 7f100000 rw-p 0
`
)

// TestRegionsSidecar: stats lists the trace's mappings, headroom splits by
// them, convert carries the sidecar along, and a trace without one falls
// back to address ranges.
func TestRegionsSidecar(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "job.txt")
	os.WriteFile(tr, []byte(regionsTrace), 0o644)
	os.WriteFile(tr+".maps", []byte(regionsMaps), 0o644)

	code, out, errs := run(t, "", "stats", tr)
	if code != 0 {
		t.Fatal(errs)
	}
	for _, want := range []string{
		"\nregions              3 (2 mappings of " + tr + ".maps)\n",
		"  [heap] 0x400000-0x402000      2      8.0 KiB  6\n",
		"  [anon] 0x7f000000-0x7f100000  1      4.0 KiB  1\n",
		"  unmapped 0x9000000-0x9001000  1      4.0 KiB  1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = run(t, "", "stats", tr, "--json")
	var j struct {
		Regions []struct {
			Label string `json:"label"`
			Pages int64  `json:"pages"`
		} `json:"regions"`
		Windows int `json:"windows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || len(j.Regions) != 3 || j.Windows != 6 {
		t.Errorf("stats --json: %d %+v\n%s", code, j, out)
	}

	code, out, errs = run(t, "", "headroom", tr, "-p", "age:A=3", "--vs", "opp:r=50%")
	if code != 0 {
		t.Fatal(errs)
	}
	for _, want := range []string{"by memory region: 2 mappings of " + tr + ".maps:", "[heap] 0x400000-0x402000  ", "[anon] 0x7f000000-0x7f100000  "} {
		if !strings.Contains(out, want) {
			t.Errorf("headroom lacks %q:\n%s", want, out)
		}
	}

	bin := filepath.Join(dir, "job.mdkt")
	if code, _, errs := run(t, "", "convert", tr, bin); code != 0 {
		t.Fatal(errs)
	}
	if got, err := os.ReadFile(bin + ".maps"); err != nil || string(got) != regionsMaps {
		t.Errorf("convert's sidecar %q (%v), want a copy of the input's", got, err)
	}

	os.Remove(tr + ".maps")
	code, out, _ = run(t, "", "stats", tr)
	if code != 0 || strings.Contains(out, "regions") {
		t.Errorf("without a sidecar stats prints regions:\n%s", out)
	}
	code, out, _ = run(t, "", "headroom", tr, "-p", "age:A=3", "--vs", "opp:r=50%")
	if code != 0 || !strings.Contains(out, "by memory region: address ranges (no mappings):") {
		t.Errorf("without a sidecar:\n%s", out)
	}
	if code, _, errs := run(t, "", "stats", tr, "--maps", filepath.Join(dir, "none.maps")); code != ExitError || !strings.Contains(errs, "none.maps") {
		t.Errorf("missing --maps: exit %d, %q", code, errs)
	}
	os.WriteFile(tr+".maps", []byte("mdk-maps 1\n0 0 zz 1 rw-p 0\n"), 0o644)
	if code, _, errs := run(t, "", "headroom", tr, "-p", "age:A=3"); code != ExitError || !strings.Contains(errs, tr+".maps:2: ") {
		t.Errorf("bad sidecar: exit %d, %q", code, errs)
	}
}
