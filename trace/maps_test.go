package trace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/trace"
)

var testMaps = []trace.Mapping{
	{Window: 0, Space: 0, Start: 0x55d4c000, End: 0x55d6d000, Perms: "rw-p", Path: "[heap]"},
	{Window: 0, Space: 0, Start: 0x7f3a00000000, End: 0x7f3a40000000, Perms: "rw-p"},
	{Window: 3, Space: 1, Start: 0x400000, End: 0x401000, Perms: "r-xp", Offset: 0x1000, Path: "/usr/bin/my app"},
}

func TestMapsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := trace.WriteMaps(&buf, testMaps); err != nil {
		t.Fatal(err)
	}
	want := "mdk-maps 1\n0 0 55d4c000 55d6d000 rw-p 0 [heap]\n0 0 7f3a00000000 7f3a40000000 rw-p 0\n3 1 400000 401000 r-xp 1000 /usr/bin/my app\n"
	if buf.String() != want {
		t.Errorf("written:\n%s\nwant:\n%s", buf.String(), want)
	}
	got, err := trace.ReadMaps(&buf, "x.maps")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(testMaps, got); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
	if l := testMaps[1].Label(); l != "[anon] 0x7f3a00000000-0x7f3a40000000" {
		t.Errorf("label %q", l)
	}
}

func TestReadMapsErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "x.maps: empty"},
		{"mdk-maps 2\n", "x.maps:1: want \"mdk-maps 1\""},
		{"mdk-maps 1\n0 0 10 20 rw-p\n", "x.maps:2: want WINDOW"},
		{"mdk-maps 1\n# comment\n0 0 20 10 rw-p 0\n", "x.maps:3: mapping 0x20-0x10 is empty"},
		{"mdk-maps 1\n0 0 1g 20 rw-p 0\n", "x.maps:2: want decimal"},
		{"mdk-maps 1\n-1 0 10 20 rw-p 0\n", "x.maps:2: want decimal"},
		{"mdk-maps 1\n0 0 10 20 rw 0\n", "x.maps:2: permissions"},
		{"mdk-maps 1\n0 0 10 20 rw-p 0 " + strings.Repeat("a", 70000) + "\n", "x.maps:2: bufio.Scanner: token too long"},
	} {
		_, err := trace.ReadMaps(strings.NewReader(tc.in), "x.maps")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%.40q: error %v, want %q", tc.in, err, tc.want)
		}
	}
	if err := trace.WriteMaps(&bytes.Buffer{}, []trace.Mapping{{Start: 5, End: 5, Perms: "rw-p"}}); err == nil {
		t.Error("an empty mapping was written")
	}
}

func FuzzReadMaps(f *testing.F) {
	var buf bytes.Buffer
	trace.WriteMaps(&buf, testMaps)
	f.Add(buf.Bytes())
	f.Add([]byte("mdk-maps 1\n0 0 0 1 ---p 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, err := trace.ReadMaps(bytes.NewReader(data), "fuzz.maps")
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := trace.WriteMaps(&out, ms); err != nil {
			t.Fatalf("read %+v, cannot write it: %v", ms, err)
		}
		again, err := trace.ReadMaps(&out, "again.maps")
		if err != nil || !cmp.Equal(ms, again) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, ms, again)
		}
	})
}
