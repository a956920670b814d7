package agent

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRowRoundTrip writes rows as CSV and JSON and reads them back.
func TestRowRoundTrip(t *testing.T) {
	rows := []Row{{Window: 0, Alive: 5, Decided: 3, Reclaimed: 3, Out: 2, Refused: 1, PSISome: 1.5, MajFlt: -1}, {Window: 1, Promotions: 2, Saved: 1, TouchesPerSec: 1e6}}
	rows[0].RefusedBy[2] = 1
	var buf bytes.Buffer
	buf.WriteString(strings.Join(Columns(), ",") + "\n")
	for _, r := range rows {
		buf.WriteString(strings.Join(r.csvRecord(), ",") + "\n")
	}
	got, err := ReadMeasured(&buf, "m.csv")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, got); diff != "" {
		t.Errorf("CSV round trip (-want +got):\n%s", diff)
	}
	// A controller's run: its setting and switch columns read back.
	rows[0].Setting, rows[1].Setting, rows[1].Switched = "none", "age:A=2", true
	buf.Reset()
	buf.WriteString(strings.Join(append(Columns(), "setting", "switch"), ",") + "\n")
	for i, r := range rows {
		buf.WriteString(strings.Join(append(r.csvRecord(), r.Setting, strconv.Itoa(i)), ",") + "\n")
	}
	if got, err = ReadMeasured(&buf, "m.csv"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, got); diff != "" {
		t.Errorf("CSV round trip of a controller's run (-want +got):\n%s", diff)
	}
	rows[0].Setting = "" // a fixed setting's row: the columns alone
	b, _ := rows[0].MarshalJSON()
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil || m["refused_locked"] != 1 || m["psi_some_avg10"] != 1.5 || len(m) != len(Columns()) {
		t.Errorf("JSON %s: %v %v", b, m, err)
	}
}

func TestReadMeasuredErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"", "empty file"},
		{"alive\n1\n", `no "window" column`},
		{"window,alive\n0,x\n", "m.csv:2: alive: expected an integer"},
		{"window\n1\n", "m.csv:2: window 1, expected 0"},
		{"window,psi_some_avg10\n0,zz\n", "expected a number"},
		{"window,setting,switch\n0,none,2\n", "m.csv:2: switch: expected 0 or 1"},
	} {
		_, err := ReadMeasured(strings.NewReader(tc.in), "m.csv")
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.msg)
		}
	}
}

// FuzzReadMeasured: a damaged measured.csv is an error, never a panic.
func FuzzReadMeasured(f *testing.F) {
	f.Add([]byte(strings.Join(Columns(), ",") + "\n" + strings.Repeat("0,", len(Columns())-1) + "0\n"))
	f.Add([]byte("window,alive\n0,1\n1,2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ReadMeasured(bytes.NewReader(b), "m.csv")
	})
}
