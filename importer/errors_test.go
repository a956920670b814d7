package importer

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestErrors(t *testing.T) {
	csv := Options{Window: 30 * time.Second, CSV: CSVOptions{TimeCol: 1, IDCol: 2, SizeCol: 3}}
	csvBlock := csv
	csvBlock.Map = MapBlock
	reqs := Options{WindowRequests: 2}
	oracle := func(recs ...[3]uint64) []byte {
		var b []byte
		for _, r := range recs {
			rec := make([]byte, 24)
			putLE(rec[0:4], r[0])
			putLE(rec[4:12], r[1])
			putLE(rec[12:16], r[2])
			b = append(b, rec...)
		}
		return b
	}
	tests := []struct {
		name, format string
		in           string
		o            Options
		want         string // substring of the error
		is           error  // errors.Is target, if any
	}{
		{"csv header not skipped", "csv", "time,id,size\n1,2,3\n", csv, "in.csv:1: time column 1: expected an integer timestamp, got \"time\" (if line 1 is a header, use --header)", ErrFormat},
		{"csv short line", "csv", "1,2,3\n4,5\n", csv, "in.csv:2: found 2 field(s), expected at least 3", ErrFormat},
		{"csv bad id", "csv", "1,2,3\n\n4,x5,6\n", csv, "in.csv:3: object id column 2: expected an unsigned integer", ErrFormat},
		{"csv bad size", "csv", "1,2,-3\n", csv, "in.csv:1: size column 3: expected a byte count", ErrFormat},
		{"csv backwards", "csv", "100,1,1\n200,1,1\n150,2,2\n", csv, "in.csv:3: timestamp 150 falls in window 1, but window 3 has begun", nil},
		{"csv before first", "csv", "100,1,1\n99,2,2\n", csv, "in.csv:2: timestamp 99 is before the first timestamp", nil},
		{"csv too many windows", "csv", "0,1,1\n999999999999,1,1\n", csv, "in.csv:2: timestamp 999999999999 is in window 33333333333, beyond the limit", nil},
		{"csv block overflow", "csv", "0,36028797018963968,1\n", csvBlock, "in.csv:1: block 36028797018963968 times sector size 512 overflows", nil},
		{"csv block too large", "csv", "0,0,999999999999\n", csvBlock, "in.csv:1: request of 999999999999 bytes spans 244140625 pages", nil},
		{"oracle truncated", "oracle-general", string(oracle([3]uint64{1, 2, 3})[:24+0]) + "abc", Options{}, "in.csv: byte offset 24: truncated record: 3 of 24 bytes", io.ErrUnexpectedEOF},
		{"oracle backwards", "oracle-general", string(oracle([3]uint64{100, 1, 1}, [3]uint64{50, 1, 1})), Options{}, "in.csv: byte offset 24: timestamp 50 is before the first timestamp", nil},
		{"lbn32 truncated", "lbn32", "\x01\x00\x00\x00\x02\x00", reqs, "in.csv: byte offset 4: truncated record: 2 of 4 bytes", io.ErrUnexpectedEOF},
		{"address op", "address", "l 0x10 1\nx 0x10 1\n", reqs, "in.csv:2: expected l (load) or s (store), got \"x\"", ErrFormat},
		{"address fields", "address", "l 0x10\n", reqs, "in.csv:1: expected 3 fields", ErrFormat},
		{"address hex", "address", "s 16 1\n", reqs, "in.csv:1: expected a 0x-prefixed hex address", ErrFormat},
		{"address count", "address", "s 0x16 -1\n", reqs, "in.csv:1: expected a non-negative instruction count", ErrFormat},
		{"damon not array", "damon", `{"a": 1}`, reqs, "in.csv: byte offset 0: expected a JSON array of DAMON records", ErrFormat},
		{"damon truncated", "damon", `[{"snapshots": [{"start_time": "1", "regions": []}`, reqs, "in.csv: byte offset", io.ErrUnexpectedEOF},
		{"damon bad region", "damon", `[{"snapshots": [{"start_time": "1", "regions": [{"start": "8,192", "end": "4096", "nr_accesses": 1}]}]}]`, reqs, "region 0: expected start < end, got [8192, 4096)", ErrFormat},
		{"damon bad number", "damon", `[{"snapshots": [{"start_time": "1x", "regions": []}]}]`, reqs, "byte offset 16: expected a snapshot", ErrFormat},
		{"damon trailing", "damon", `[] x`, reqs, "expected the end of the file", ErrFormat},
		{"perf event", "damon-perf", "a 1 [0] 1.0: sched:x: target_id=1 nr_regions=1 0-4096: 1\n", reqs, "in.csv:1: expected a damon:damon_aggregated: event", ErrFormat},
		{"perf group", "damon-perf", "a 1 [0] 1.0: damon:damon_aggregated: target_id=1 nr_regions=2 0-4096: 1\na 1 [0] 1.0: damon:damon_aggregated: target_id=2 nr_regions=2 0-4096: 1\n", reqs, "in.csv:2: expected region 2 of 2 of target_id=1 (snapshot from line 1)", ErrFormat},
		{"perf short", "damon-perf", "a 1 [0] 1.0: damon:damon_aggregated: target_id=1 nr_regions=2 0-4096: 1\n", reqs, "in.csv:1: snapshot from line 1 ends after 1 of its nr_regions=2 lines", io.ErrUnexpectedEOF},
		{"perf range", "damon-perf", "a 1 [0] 1.0: damon:damon_aggregated: target_id=1 nr_regions=1 4096-0: 1\n", reqs, "in.csv:1: expected START-END: with START < END", ErrFormat},
		{"no timestamps", "lbn32", "", Options{}, "format lbn32 has no timestamps; give --window-requests N", nil},
		{"csv no id col", "csv", "", Options{CSV: CSVOptions{TimeCol: 1}}, "needs the object id column", nil},
		{"window not multiple", "csv", "", Options{Window: 1500 * time.Millisecond, CSV: CSVOptions{TimeCol: 1, IDCol: 2}}, "window 1.5s is not a whole number of time units (1s)", nil},
		{"bad gzip", "address", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", reqs, "in.csv", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := importBytes(t, tc.format, []byte(tc.in), "in.csv", tc.o)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

func putLE(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

func TestAllowBackwards(t *testing.T) {
	o := Options{Window: 30 * time.Second, AllowBackwards: true, CSV: CSVOptions{TimeCol: 1, IDCol: 2}}
	tr, st, err := importBytes(t, "csv", []byte("100,1\n200,2\n150,3\n10,4\n"), "in.csv", o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Backwards != 2 || len(tr.Windows) != 4 || len(tr.Windows[3].Accessed) != 3 {
		t.Errorf("backwards %d, %d windows, last window %v; want 2, 4, three pages", st.Backwards, len(tr.Windows), tr.Windows[3].Accessed)
	}
}

func TestParseParams(t *testing.T) {
	var c CSVOptions
	if err := c.ParseParams("time-col=2, obj-id-col=5, obj-size-col=4, obj-id-is-num=true, has-header=true, delimiter=,"); err != nil {
		t.Fatal(err)
	}
	want := CSVOptions{TimeCol: 2, IDCol: 5, SizeCol: 4, Header: true, Delimiter: ','}
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
	if err := c.ParseParams("op-col=3"); err == nil || !strings.Contains(err.Error(), "unsupported key") {
		t.Errorf("op-col: got %v, want an unsupported-key error", err)
	}
	if err := c.ParseParams("delimiter=tab, obj-id-is-num=false"); err != nil || c.Delimiter != '\t' || !c.IDIsString {
		t.Errorf("got %+v, %v", c, err)
	}
}

// String ids are interned in order of first appearance; whitespace
// delimiters collapse runs.
func TestStringIDs(t *testing.T) {
	o := Options{WindowRequests: 2, CSV: CSVOptions{IDCol: 2, Delimiter: ' ', IDIsString: true}}
	tr, _, err := importBytes(t, "csv", []byte("x  foo\ny\tbar \n z foo\n"), "in.txt", o)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Pages) != 2 || tr.Pages[0].Page != 0 || tr.Pages[1].Page != 1 || len(tr.Windows) != 2 || tr.Windows[1].Accessed[0] != 0 {
		t.Errorf("pages %v windows %v", tr.Pages, accessIDs(tr))
	}
}

// A block request touches every page its byte range overlaps.
func TestBlockMapping(t *testing.T) {
	o := Options{WindowRequests: 1, Map: MapBlock, CSV: CSVOptions{IDCol: 1, SizeCol: 2}}
	// sector 7 = byte 3584; 1024 bytes end at byte 4607: pages 0 and 1.
	// sector 8, size 0: page 1 only. sector 16, 4096 bytes: pages 2 only.
	tr, _, err := importBytes(t, "csv", []byte("7,1024\n8,0\n16,4096\n"), "in.csv", o)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]uint64
	for _, w := range tr.Windows {
		var ps []uint64
		for _, id := range w.Accessed {
			ps = append(ps, tr.Pages[id].Page)
		}
		got = append(got, ps)
	}
	want := "[[0 1] [1] [2]]"
	if s := fmt.Sprint(got); s != want {
		t.Errorf("pages per window %s, want %s", s, want)
	}
}
