package importer

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/trace"
)

// lackeySample: two instructions per window; the load at 0x2ffe of 4 bytes
// spans pages 2 and 3; the store repeats page 5 in its window.
const lackeySample = "==1== Lackey\nI  00001000,4\n L 00002ffe,4\nI  00001004,4\nI  00005000,4\n S 00005000,8\n==1== Exit code: 0\n"

// TestImportLackey: importing a lackey log gives the windows and header of
// the lackey reader itself (the one mdk record --exact streams), also
// compressed, and counts lines and page accesses.
func TestImportLackey(t *testing.T) {
	want, err := trace.ReadAll(NewLackeyReader(strings.NewReader(lackeySample), "l.log", 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Windows) != 2 {
		t.Fatalf("the reader gives %d windows, want 2", len(want.Windows))
	}
	for _, comp := range []string{CompressNone, CompressGzip} {
		data := []byte(lackeySample)
		name := "l.log"
		if comp != CompressNone {
			data = compress(t, comp, data)
			name = "l.log (" + comp + ")"
			want.Header.Source = strings.Replace(want.Header.Source, "l.log;", name+";", 1)
		}
		got, st, err := importBytes(t, "lackey", data, "l.log", Options{WindowInstructions: 2})
		if err != nil {
			t.Fatalf("%s: %v", comp, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: import differs from the reader (-reader +import):\n%s", comp, d)
		}
		// 5 trace lines; page accesses 1 (I) + 2 (L spans two pages) + 1 +
		// 1 + 1 (S), before deduplication.
		if want := (Stats{Records: 5, Accesses: 6, Pages: 4, Windows: 2}); st != want {
			t.Errorf("%s: stats %+v, want %+v", comp, st, want)
		}
	}
}

func TestImportLackeyOptions(t *testing.T) {
	got, _, err := importBytes(t, "lackey", []byte(lackeySample), "l.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Window != DefaultWindowInstructions || len(got.Windows) != 1 {
		t.Errorf("default: window %d, %d windows; want %d instructions, 1 window", got.Header.Window, len(got.Windows), DefaultWindowInstructions)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{WindowRequests: 10}, "use --window-instructions, not --window-requests"},
		{Options{PageSize: 8192}, "lackey traces have 4096-byte pages"},
	} {
		_, _, err := importBytes(t, "lackey", []byte(lackeySample), "l.log", tc.o)
		if !errors.As(err, new(*OptionError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an option error saying %q", tc.o, err, tc.want)
		}
	}
	_, _, err = importBytes(t, "lackey", []byte(lackeySample), "l.log", Options{WindowInstructions: 1, MaxWindows: 2})
	if err == nil || !strings.Contains(err.Error(), "beyond the limit of 2") {
		t.Errorf("3 windows with --max-windows 2: %v", err)
	}
	_, _, err = importBytes(t, "lackey", []byte("I  1000,4\nI  zz,4\n"), "l.log", Options{})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || !strings.HasPrefix(err.Error(), "l.log:2: expected a hexadecimal address") {
		t.Errorf("bad address: %v, want a syntax error at line 2", err)
	}
}

func TestScanHex(t *testing.T) {
	for _, tc := range []struct {
		in    string
		v     uint64
		n     int
		ok    bool
		parse bool // parseHex accepts it
	}{
		{"", 0, 0, true, false},
		{"1f,", 0x1f, 2, true, false},
		{"ffffffffffffffff", 1<<64 - 1, 16, true, true},
		{"0000ffffffffffffffff", 1<<64 - 1, 20, true, false}, // leading zeros fit; parseHex takes 16 digits at most
		{"10000000000000000", 0, 16, false, false},
		{"DeadBeef", 0xdeadbeef, 8, true, true},
		{"12g", 0x12, 2, true, false},
	} {
		v, n, ok := scanHex([]byte(tc.in))
		if v != tc.v || n != tc.n || ok != tc.ok {
			t.Errorf("scanHex(%q) = %#x, %d, %v; want %#x, %d, %v", tc.in, v, n, ok, tc.v, tc.n, tc.ok)
		}
		if pv, pok := parseHex([]byte(tc.in)); pok != tc.parse || (pok && pv != tc.v) {
			t.Errorf("parseHex(%q) = %#x, %v; want ok %v", tc.in, pv, pok, tc.parse)
		}
	}
}
