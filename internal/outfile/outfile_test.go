package outfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCommitReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(got) != "new" || st.Mode().Perm() != 0o600 {
		t.Fatalf("got %q mode %v, want \"new\" with the old file's mode 0600", got, st.Mode().Perm())
	}
	assertOnly(t, dir, "out")
}

func TestAbortKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o644)
	o, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("partial"))
	o.Abort()
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("after Abort the file holds %q, want \"old\"", got)
	}
	assertOnly(t, dir, "out")
}

func TestPublish(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o644)
	o, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	o.Write([]byte("first "))
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("before Publish: %q", got)
	}
	if err := o.Publish(); err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("second"))
	if got, _ := os.ReadFile(p); string(got) != "first second" {
		t.Fatalf("after Publish the file holds %q", got)
	}
	o.Abort() // a published file stays
	if got, _ := os.ReadFile(p); string(got) != "first second" {
		t.Fatalf("after Abort of a published file: %q", got)
	}
	assertOnly(t, dir, "out")
}

func TestErrorsNameDestination(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "no", "such", "out"))
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("no/such/out")) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want one naming no/such/out and wrapping ErrNotExist", err)
	}
}

// assertOnly checks that dir holds exactly the named files: no temporary
// file is left behind.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("dir holds %v, want %v", got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("dir holds %v, want %v", got, names)
		}
	}
}
