package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"mdk/internal/testutil"
)

// oldContent is what every output file holds before a command that must
// fail; it must hold exactly that afterwards.
var oldContent = []byte("an older output that a failed command must leave alone\n")

// outputCase is one command that writes files, and how to make it fail.
type outputCase struct {
	name string
	// files are the output files the command writes, relative to the
	// output directory; each is seeded with oldContent.
	files []string
	// args is the command line writing into dir, reading the good input
	// good (a small trace) or a damaged one.
	args func(dir, input string) []string
	// damaged, if set, is the failing-input variant's input (else the
	// input is a truncated trace).
	damaged string
	// recorder: the file is published at the first complete window, so
	// the full disk has no room for even that.
	recorder bool
}

func outputCases(t *testing.T, in string) []outputCase {
	return []outputCase{
		{name: "convert", files: []string{"out.txt"}, args: func(d, in string) []string { return []string{"convert", in, filepath.Join(d, "out.txt")} }},
		{name: "check-salvage", files: []string{"out.mdkt"}, args: func(d, in string) []string {
			return []string{"check", in, "--salvage", filepath.Join(d, "out.mdkt")}
		}, damaged: filepath.Join(t.TempDir(), "missing.mdkt")},
		{name: "gen", files: []string{"out.txt"}, args: func(d, in string) []string {
			if in == "damaged" { // an impossible size
				return []string{"gen", "--pages", "2147483648", "-o", filepath.Join(d, "out.txt")}
			}
			return []string{"gen", "--pages", "2000", "--windows", "20", "-o", filepath.Join(d, "out.txt")}
		}, damaged: "damaged"},
		{name: "import", files: []string{"out.txt"}, args: func(d, in string) []string {
			return []string{"import", "csv", in, "-o", filepath.Join(d, "out.txt"), "-t", "time-col=1, obj-id-col=2, has-header=true"}
		}},
		{name: "mpc-plot", files: []string{"curves.svg"}, args: func(d, in string) []string {
			return []string{"mpc", in, "-p", "age:A=0..20", "--plot", filepath.Join(d, "curves.svg")}
		}},
		{name: "report", files: []string{"report.html"}, args: func(d, in string) []string {
			return []string{"report", in, "-p", "age:A=0..5", "-o", filepath.Join(d, "report.html")}
		}},
		{name: "report-svg", files: []string{"report.html", "figs/mpc.svg"}, args: func(d, in string) []string {
			return []string{"report", in, "-p", "age:A=0..5", "-o", filepath.Join(d, "report.html"), "--svg", filepath.Join(d, "figs")}
		}},
		{name: "lopp-train", files: []string{"model.json"}, args: func(d, in string) []string {
			return []string{"lopp", "train", in, "--rounds", "20", "-o", filepath.Join(d, "model.json")}
		}},
		{name: "fleet", files: []string{"fleet.json", "summary.txt"}, args: func(d, in string) []string {
			return []string{"fleet", in, "-p", "age:A=0..5", "-o", d}
		}, damaged: filepath.Join(t.TempDir(), "no-such-*.mdkt")},
		{name: "record-exact", files: []string{"rec.txt"}, args: func(d, in string) []string {
			if strings.HasSuffix(in, ".mdkt") {
				in = "/bin/true"
			}
			return []string{"record", "--exact", "--window-instructions", "2000", "-o", filepath.Join(d, "rec.txt"), "--", in}
		}, damaged: "/nonexistent/prog", recorder: true},
		{name: "record", files: []string{"rec.mdkt"}, args: func(d, in string) []string {
			return []string{"record", "--pid", "999999999", "--duration", "1s", "--window", "1s", "-o", filepath.Join(d, "rec.mdkt")}
		}},
	}
}

// TestFailedCommandKeepsOldFiles runs every command that writes files so
// that it fails, once on a damaged input and once on a full disk (a small
// tmpfs), and checks that the files it would have replaced are
// byte-identical afterwards and that no temporary file is left behind.
func TestFailedCommandKeepsOldFiles(t *testing.T) {
	inputs := t.TempDir()
	good := filepath.Join(inputs, "in.mdkt")
	if code, _, errs := run(t, "", "gen", "--pages", "3000", "--windows", "40", "-o", good); code != 0 {
		t.Fatal(errs)
	}
	raw, _ := os.ReadFile(good)
	damaged := filepath.Join(inputs, "damaged.mdkt")
	os.WriteFile(damaged, raw[:len(raw)/3], 0o644)
	goodCSV := filepath.Join(inputs, "in.csv")
	var csv bytes.Buffer
	csv.WriteString("time,id\n")
	for i := range 40000 {
		fmt.Fprintf(&csv, "%d,%d\n", i/100, i%9973)
	}
	os.WriteFile(goodCSV, csv.Bytes(), 0o644)
	damagedCSV := filepath.Join(inputs, "damaged.csv")
	os.WriteFile(damagedCSV, append(slices.Clone(csv.Bytes()), "200,not-a-number\n"...), 0o644)

	for _, tc := range outputCases(t, good) {
		in, bad := good, damaged
		if tc.name == "import" {
			in, bad = goodCSV, damagedCSV
		}
		if tc.damaged != "" {
			bad = tc.damaged
		}
		if tc.name == "record-exact" {
			testutil.RequireTool(t, "valgrind")
		}
		if tc.name != "record" { // record fails on its target, whatever the disk
			t.Run(tc.name+"/damaged-input", func(t *testing.T) {
				dir := t.TempDir()
				seed(t, dir, tc.files)
				expectFailure(t, dir, tc, tc.args(dir, bad), "")
			})
		}
		t.Run(tc.name+"/full-disk", func(t *testing.T) {
			dir := fullDisk(t)
			seed(t, dir, tc.files)
			fill(t, dir, tc.recorder)
			want := "no space left on device"
			if tc.name == "record" {
				want = ""
			}
			expectFailure(t, dir, tc, tc.args(dir, in), want)
		})
	}
}

// seed writes oldContent into every file of files under dir.
func seed(t *testing.T, dir string, files []string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, oldContent, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// expectFailure runs args, which must fail (with wantErr in the message
// if not empty), and checks the old files and that no other file appeared
// (the filler of a full disk aside).
func expectFailure(t *testing.T, dir string, tc outputCase, args []string, wantErr string) {
	t.Helper()
	before := listFiles(t, dir)
	code, _, errs := run(t, "", args...)
	if code == 0 {
		t.Fatalf("mdk %s succeeded; it should fail", strings.Join(args, " "))
	}
	if wantErr != "" && !strings.Contains(errs, wantErr) {
		t.Errorf("stderr %q does not say %q", errs, wantErr)
	}
	for _, f := range tc.files {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Equal(got, oldContent) {
			t.Errorf("after mdk %s (exit %d: %s) %s holds %q (%v), want the old content", strings.Join(args, " "), code, strings.TrimSpace(errs), f, truncate(got), err)
		}
	}
	if after := listFiles(t, dir); !slices.Equal(before, after) {
		t.Errorf("files before %v, after %v: a temporary file was left behind", before, after)
	}
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

func listFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// fullDisk mounts a 64 KiB tmpfs for the test and returns its path. It
// needs root; without it the test is skipped (also in CI, whose machine may
// not allow mounts).
func fullDisk(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk needs a tmpfs mount: not root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill fills the file system of dir up to one page (or whole), so that a
// command's output starts to be written and then fails.
func fill(t *testing.T, dir string, whole bool) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, ".filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n := 0
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
		n++
	}
	if whole {
		return
	}
	if err := f.Truncate(int64(max(0, n-1)) * 4096); err != nil {
		t.Fatal(err)
	}
}
