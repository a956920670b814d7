package collect

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRuns(t *testing.T) {
	got := Runs(nil, []uint64{9, 3, 4, 5, 5, 7, 10, 11, 1})
	want := []Run{{1, 1}, {3, 3}, {7, 1}, {9, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Runs (-want +got):\n%s", diff)
	}
	if got := Runs(got, nil); len(got) != 0 {
		t.Errorf("Runs of nothing: %v", got)
	}
}

func TestRefusalOf(t *testing.T) {
	for _, tc := range []struct {
		flags, count uint64
		want         Refusal
	}{
		{1 << kpfLRU, 1, RefusedUnknown},
		{1<<kpfLRU | 1<<kpfMlocked, 1, RefusedLocked},
		{1<<kpfLRU | 1<<kpfUnevictable, 1, RefusedLocked},
		{1<<kpfLRU | 1<<kpfTHP, 1, RefusedHuge},
		{1 << kpfLRU, 2, RefusedShared},
		{0, 1, RefusedNotLRU},
	} {
		if got := RefusalOf(tc.flags, tc.count); got != tc.want {
			t.Errorf("RefusalOf(%#x, %d) = %v, want %v", tc.flags, tc.count, got, tc.want)
		}
	}
	var nilFlags *PageFlags
	if got := nilFlags.Refusal(PagemapPresent | 5); got != RefusedUnreadable {
		t.Errorf("no kpageflags: %v", got)
	}
}

func TestParseZramStat(t *testing.T) {
	z, err := ParseZramStat([]byte("    8192     2375    12288        0    12288        0        0        3        0\n"), "mm_stat")
	if err != nil {
		t.Fatal(err)
	}
	want := ZramStat{OrigDataBytes: 8192, ComprDataBytes: 2375, MemUsedBytes: 12288, HugePages: 3}
	if z != want {
		t.Errorf("got %+v, want %+v", z, want)
	}
	for _, bad := range []string{"", "1 2 3", "1 2 x 4 5 6"} {
		if _, err := ParseZramStat([]byte(bad), "mm_stat"); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: error %v, want ErrFormat", bad, err)
		}
	}
}

func TestParseSwaps(t *testing.T) {
	in := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram1                              partition\t65532\t\t12\t\t100\n"
	got, err := parseSwaps([]byte(in), "swaps")
	if err != nil {
		t.Fatal(err)
	}
	want := []SwapDevice{{Filename: "/dev/zram1", SizeBytes: 65532 * 1024, UsedBytes: 12 * 1024, Priority: 100}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseSwaps([]byte("h\n/dev/x partition 1 2\n"), "swaps"); !errors.Is(err, ErrFormat) {
		t.Errorf("short line: %v", err)
	}
	if _, err := parseSwaps([]byte("h\n/dev/x partition 1 z 3\n"), "swaps"); !errors.Is(err, ErrFormat) {
		t.Errorf("bad number: %v", err)
	}
}

func TestParseKeyValues(t *testing.T) {
	got, err := parseKeyValues([]byte("pswpin 7\nnr_free_pages 12\npswpout 9\n"), "vmstat", []string{"pswpin", "pswpout", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"pswpin": 7, "pswpout": 9}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := parseKeyValues([]byte("pswpin x\n"), "vmstat", []string{"pswpin"}); !errors.Is(err, ErrFormat) {
		t.Errorf("bad value: %v", err)
	}
}

// FuzzActuateParsers: the kernel-file parsers of the actuator never panic.
func FuzzActuateParsers(f *testing.F) {
	f.Add([]byte("    8192     2375    12288        0    12288        0        0        0        0\n"))
	f.Add([]byte("Filename Type Size Used Priority\n/dev/zram1 partition 65532 0 100\n"))
	f.Add([]byte("pswpin 7\npswpout 9\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseZramStat(b, "x")
		parseSwaps(b, "x")
		parseKeyValues(b, "x", []string{"pswpin", "pswpout"})
	})
}
