package vmtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestProgram: a dynamically linked program of the host comes with its
// libraries and the loader, at ldd's paths, and a library path holding
// their directories; a relative path is an error.
func TestProgram(t *testing.T) {
	prog, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("sqlite3 is not installed (.ci/run installs it)")
		}
		t.Skip("no sqlite3 on the host")
	}
	files, libPath, err := Program(prog)
	if err != nil {
		t.Fatal(err)
	}
	var libsqlite, loader bool
	for guest, host := range files {
		if guest != host {
			t.Errorf("%s from %s: want the same path", guest, host)
		}
		libsqlite = libsqlite || strings.Contains(guest, "libsqlite3.so")
		loader = loader || strings.Contains(guest, "ld-linux")
	}
	if files[prog] != prog || !libsqlite || !loader {
		t.Errorf("files %v: want %s, libsqlite3 and the loader", files, prog)
	}
	if libPath == "" {
		t.Error("no library path")
	}
	if _, _, err := Program("sqlite3"); err == nil {
		t.Error("a relative path: no error")
	}
}
