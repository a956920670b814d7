package calibrate

import (
	"bytes"
	"compress/flate"
	"strings"
	"testing"

	"mdk/linux"
	"mdk/tier"
)

const mapsSample = `55d5c2a4e000-55d5c2a6f000 rw-p 00000000 00:00 0                          [heap]
7f1c2c000000-7f1c2c004000 rw-p 00000000 00:00 0 
7f1c33a00000-7f1c33a28000 r--p 00000000 fd:01 1055                       /usr/lib/libc.so.6
7f1c33c00000-7f1c33c02000 rw-p 00028000 fd:01 1055                       /usr/lib/libc.so.6
7f1c33d00000-7f1c33d01000 rw-s 00000000 00:05 77                         /dev/zero (deleted)
7ffd1e000000-7ffd1e021000 rw-p 00000000 00:00 0                          [stack]
7ffd1e100000-7ffd1e102000 r-xp 00000000 00:00 0                          [vdso]
`

func TestParseMapsAnon(t *testing.T) {
	ms, err := linux.ParseMaps(strings.NewReader(mapsSample), "maps")
	if err != nil {
		t.Fatal(err)
	}
	var anon []string
	for _, m := range ms {
		if isAnon(m) {
			anon = append(anon, m.Path)
		}
	}
	if got := strings.Join(anon, ","); got != "[heap],,[stack]" {
		t.Errorf("anonymous mappings %q, want [heap], the unnamed one and [stack]", got)
	}
	if ms[2].Path != "/usr/lib/libc.so.6" || ms[4].Path != "/dev/zero (deleted)" {
		t.Errorf("paths %q %q", ms[2].Path, ms[4].Path)
	}
}

// TestPagePicker draws every page of the anonymous mappings exactly once,
// never a page of another mapping, the same way for the same seed.
func TestPagePicker(t *testing.T) {
	ms, _ := linux.ParseMaps(strings.NewReader(mapsSample), "maps")
	p := newPagePicker(ms, 4096, 3)
	want := map[uint64]bool{}
	for _, m := range ms {
		if isAnon(m) {
			for a := m.Start; a < m.End; a += 4096 {
				want[a] = true
			}
		}
	}
	if p.Pages() != uint64(len(want)) {
		t.Fatalf("%d pages, want %d", p.Pages(), len(want))
	}
	var order []uint64
	for {
		a, ok := p.Next()
		if !ok {
			break
		}
		if !want[a] {
			t.Fatalf("drew %#x: not an anonymous page, or twice", a)
		}
		delete(want, a)
		order = append(order, a)
	}
	if len(want) != 0 {
		t.Errorf("%d pages never drawn", len(want))
	}
	again := newPagePicker(ms, 4096, 3)
	for i := range 10 {
		if a, _ := again.Next(); a != order[i] {
			t.Fatalf("draw %d: %#x, then %#x with the same seed", i, order[i], a)
		}
	}
}

func TestLatency(t *testing.T) {
	ns := []int64{50, 10, 40, 30, 20, 100, 90, 80, 70, 60}
	got := latency(ns)
	// Sorted 10..100: p50 is the 5th (50), p99 the 10th (100).
	if want := (tier.Latency{Samples: 10, Mean: 55, MeanWall: 55, P50: 50, P99: 100, Max: 100}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if (latency(nil) != tier.Latency{}) {
		t.Error("latency of nothing is not zero")
	}
}

// TestContentCompressibility checks that each synthetic content compresses
// as its share of random bytes says (DEFLATE here, zram's compressor on the
// machine), and that no two pages are alike.
func TestContentCompressibility(t *testing.T) {
	const pages = 64
	for _, c := range Contents {
		buf := make([]byte, pages*4096)
		c.fill(buf, 4096, 1)
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, flate.BestSpeed)
		w.Write(buf)
		w.Close()
		per := float64(z.Len()) / pages
		if want := float64(c.RandomBytes); per < 0.95*want || per > want*1.05+64 {
			t.Errorf("%s: %.0f compressed bytes per page, want about %v", c.Name, per, want)
		}
		if c.RandomBytes > 0 && bytes.Equal(buf[:4096], buf[4096:8192]) {
			t.Errorf("%s: two pages alike", c.Name)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Tier: "zswap"}, "calibrate: zswap is not measured on a host"},
		{Options{Tier: "nvme"}, `calibrate: tier "nvme": want zram, swapfile or zswap`},
		{Options{Tier: "swapfile"}, "calibrate: --tier swapfile needs --dir"},
		{Options{Tier: "zram", Pages: 10}, "calibrate: 10 pages per content: want 64 to 262144"},
		{Options{Tier: "zram", Contents: []string{"text"}}, `calibrate: unknown content "text"`},
		{Options{Tier: "zram", Contents: []string{"zero"}, Content: "half"}, `calibrate: content "half" is not among the measured ones (zero)`},
	} {
		if _, err := Plan(tc.o); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Plan(%+v): %v, want %q", tc.o, err, tc.want)
		}
	}
	plan, err := Plan(Options{Tier: "zram", PID: 42})
	if err != nil || !strings.Contains(plan, "hot_add") || !strings.Contains(plan, "/proc/42/mem (read only)") || !strings.Contains(plan, "hot_remove") {
		t.Errorf("plan: %v\n%s", err, plan)
	}
}

// FuzzParsers: the page picker draws from any mappings linux.ParseMaps
// accepts (the kernel-file parsers themselves are fuzzed in package linux).
func FuzzParsers(f *testing.F) {
	f.Add([]byte(mapsSample))
	f.Fuzz(func(t *testing.T, b []byte) {
		if ms, err := linux.ParseMaps(bytes.NewReader(b), "maps"); err == nil {
			for _, m := range ms {
				if m.End < m.Start {
					t.Fatalf("mapping %+v ends before it starts", m)
				}
			}
			p := newPagePicker(ms, 4096, 1)
			for range min(p.Pages(), 100) {
				if _, ok := p.Next(); !ok {
					t.Fatal("picker ran out early")
				}
			}
		}
	})
}
