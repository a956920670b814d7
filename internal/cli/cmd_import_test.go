package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdk/trace"
)

func runImportCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestImportCmd(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "t.txt")
	// Two 30 s windows from t0 = 100. Sector 7 (byte 3584) of 1024 bytes
	// spans pages 0 and 1; sector 16 is byte 8192, page 2; 512 bytes at
	// sector 7 stay in page 0.
	csv := "time,lbn,size\n100,7,1024\n110,16,512\n131,7,512\n"
	code, _, errs := runImportCLI(t, csv, "import", "csv", "-", "-o", out, "--map", "block",
		"-t", "time-col=1, obj-id-col=2, obj-size-col=3, has-header=true")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "3 records, 4 page accesses, 3 distinct pages, 2 windows") {
		t.Errorf("stderr %q", errs)
	}
	r, c, err := trace.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := trace.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Windows) != 2 || len(tr.Windows[0].Accessed) != 3 || len(tr.Windows[1].Accessed) != 1 || tr.Pages[tr.Windows[1].Accessed[0]].Page != 0 {
		t.Errorf("windows %+v", tr.Windows)
	}

	// Bad data: exit 1, the line named, no output left behind.
	bad := filepath.Join(dir, "bad.txt")
	code, _, errs = runImportCLI(t, "1,2\n3,x\n", "import", "csv", "-", "-o", bad, "--time-col", "1", "--obj-id-col", "2")
	if code != ExitError || !strings.Contains(errs, "stdin:2: object id column 2") {
		t.Errorf("exit %d, stderr %q; want 1 and the line", code, errs)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("partial output left behind")
	}
	// Options that do not fit the format: exit 2.
	for _, args := range [][]string{
		{"import", "lbn32", "-", "-o", bad},
		{"import", "nosuch", "-", "-o", bad},
		{"import", "csv", "-", "-o", bad, "--map", "pages"},
		{"import", "csv", "-"},
	} {
		if code, _, errs := runImportCLI(t, "", args...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errs)
		}
	}
}

// mdk import lackey: importer's lackey format (the reader mdk record --exact
// streams valgrind's live log through).
func TestImportLackey(t *testing.T) {
	out := filepath.Join(t.TempDir(), "l.txt")
	// Two instructions per window; the load at 0x2ffe of 4 bytes spans
	// pages 2 and 3.
	log := "==1== Lackey\nI  00001000,4\n L 00002ffe,4\nI  00001004,4\nI  00005000,4\n S 00005000,8\n"
	code, _, errs := runImportCLI(t, log, "import", "lackey", "-", "-o", out, "--window-instructions", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r, c, err := trace.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr, err := trace.ReadAll(r)
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
	if want := "[[1 2 3] [5]]"; fmt.Sprint(got) != want {
		t.Errorf("pages per window %v, want %s", got, want)
	}
}
