package tier

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinsValid(t *testing.T) {
	names := BuiltinNames()
	if strings.Join(names, ",") != "cxl,ssd,zram,zswap" {
		t.Errorf("built-in tiers %v", names)
	}
	for _, n := range names {
		b, ok := Builtin(n)
		if !ok {
			t.Fatalf("Builtin(%q) missing", n)
		}
		if err := b.Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if b.Source == "" {
			t.Errorf("%s has no source", n)
		}
		b.Name = "changed"
		if again, _ := Builtin(n); again.Name != n {
			t.Errorf("Builtin(%q) returned shared state", n)
		}
	}
}

func TestFileRoundTrip(t *testing.T) {
	z, _ := Builtin("zram")
	z.ResidentTouchNs = &Latency{Samples: 10, Mean: 100, P50: 90, P99: 300, Max: 400}
	z.Contents = []Content{{Name: "zero", Pages: 4, OrigBytes: 16384, MemUsedBytes: 0, SamePages: 4}}
	path := filepath.Join(t.TempDir(), "tier.json")
	if err := z.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(z, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "t.json: empty tier file"},
		{"syntax", `{"name": "x",}`, "t.json: byte 14: invalid character '}'"},
		{"type", `{"name": 3}`, "t.json: byte 10: field name: want string, got JSON number"},
		{"unknown", `{"name": "x", "page_size_bytes": 4096, "latency": 1}`, `t.json: json: unknown field "latency"`},
		{"trailing", `{"name": "x", "page_size_bytes": 4096} {}`, "t.json: byte 39: data after the tier's JSON object"},
		{"page size", `{"name": "x"}`, "t.json: page_size_bytes: want a positive page size, got 0"},
		{"negative", `{"name": "x", "page_size_bytes": 4096, "promotion_ns": {"mean": -1}}`, "t.json: promotion_ns.mean: want a finite number >= 0, got -1"},
		{"two", `{"page_size_bytes": 4096, "stored_bytes_per_page": 1e9}`, "t.json: name: missing\nstored_bytes_per_page: 1e+09 is more than 4 pages of 4096 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in), "t.json")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func TestLoadUnknown(t *testing.T) {
	_, err := Load("nvme")
	if err == nil || !strings.Contains(err.Error(), "neither a built-in tier (cxl, ssd, zram, zswap) nor a file") {
		t.Errorf("Load(nvme): %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("Load(missing file): %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func FuzzParse(f *testing.F) {
	z, _ := Builtin("zram")
	var b bytes.Buffer
	z.Write(&b)
	f.Add(b.Bytes())
	f.Add([]byte(`{"name":"x","page_size_bytes":1}`))
	f.Add([]byte(`{"name":"x","page_size_bytes":4096,"promotion_ns":{"mean":1e400}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz: ") {
				t.Errorf("error without the file name: %v", err)
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Errorf("parsed an invalid tier: %v", err)
		}
		var out bytes.Buffer
		if err := tr.Write(&out); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(&out, "again")
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		if d := cmp.Diff(tr, again); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
	})
}
