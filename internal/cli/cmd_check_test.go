package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runMDK runs the CLI in-process.
func runMDK(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func genSmall(t *testing.T, path string, extra ...string) []byte {
	t.Helper()
	args := append([]string{"gen", "--pages", "2000", "--windows", "30", "--seed", "3", "-o", path}, extra...)
	if code, _, stderr := runMDK(t, args...); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGenConvertCheck(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	bin := genSmall(t, p("a.mdkt"))
	if again := genSmall(t, p("b.mdkt")); !bytes.Equal(bin, again) {
		t.Fatal("gen with the same seed wrote different files")
	}
	// binary -> text -> binary is byte-identical.
	for _, args := range [][]string{
		{"convert", p("a.mdkt"), p("a.txt")},
		{"convert", p("a.txt"), p("c.mdkt")},
		{"convert", p("a.txt"), p("d.trace"), "--format", "binary"},
	} {
		if code, _, stderr := runMDK(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	for _, name := range []string{"c.mdkt", "d.trace"} {
		if got, _ := os.ReadFile(p(name)); !bytes.Equal(bin, got) {
			t.Fatalf("%s differs from a.mdkt", name)
		}
	}
	txt, _ := os.ReadFile(p("a.txt"))
	if !bytes.HasPrefix(txt, []byte("mdk-trace 1\n")) {
		t.Fatalf("a.txt starts with %q", txt[:20])
	}
	code, stdout, _ := runMDK(t, "check", p("a.mdkt"))
	if code != 0 || !strings.Contains(stdout, "intact: 30 windows (last intact window: 29)") || !strings.Contains(stdout, "status: ok") {
		t.Fatalf("check of a good file: exit %d\n%s", code, stdout)
	}
}

func TestCheckDamaged(t *testing.T) {
	dir := t.TempDir()
	bin := genSmall(t, filepath.Join(dir, "a.mdkt"))
	// The offset of window 10's block: the size of a file of the first 10
	// windows, minus its 9-byte end block.
	genSmall(t, filepath.Join(dir, "ten.mdkt"), "--windows", "10")
	ten, _ := os.ReadFile(filepath.Join(dir, "ten.mdkt"))
	// Same header except the window count, which is one uvarint byte either way.
	block10 := len(ten) - 9
	for _, tc := range []struct {
		name string
		data []byte
		want []string
	}{
		{"truncated", bin[:block10+20], []string{
			"intact: 10 windows (last intact window: 9)",
			"status: DAMAGED: ",
			"byte offset " + itoa(block10) + ": truncated window 10 block payload",
			"(last intact window 9)",
		}},
		{"bit flip", flip(bin, block10+30), []string{
			"intact: 10 windows (last intact window: 9)",
			"byte offset " + itoa(block10) + ": window 10 block checksum mismatch",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, tc.name+".mdkt")
			if err := os.WriteFile(in, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, tc.name+"-salvaged.txt")
			code, stdout, stderr := runMDK(t, "check", in, "--salvage", out)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
			// The salvaged trace is valid and holds the 10 intact windows.
			code, stdout, _ = runMDK(t, "check", out)
			if code != 0 || !strings.Contains(stdout, "intact: 10 windows") {
				t.Fatalf("check of the salvaged trace: exit %d\n%s", code, stdout)
			}
			// Converting the damaged file fails and leaves no output.
			conv := filepath.Join(dir, tc.name+"-conv.txt")
			if code, _, stderr := runMDK(t, "convert", in, conv); code != 1 || !strings.Contains(stderr, "last intact window 9") {
				t.Fatalf("convert: exit %d, stderr %s", code, stderr)
			}
			if _, err := os.Stat(conv); !os.IsNotExist(err) {
				t.Fatalf("convert left %s behind", conv)
			}
		})
	}
}

func TestConvertUsage(t *testing.T) {
	dir := t.TempDir()
	genSmall(t, filepath.Join(dir, "a.mdkt"))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"convert", filepath.Join(dir, "a.mdkt"), "-"}, "needs --format"},
		{[]string{"convert", filepath.Join(dir, "a.mdkt"), filepath.Join(dir, "a.bin")}, "cannot tell the trace format"},
		{[]string{"convert", filepath.Join(dir, "a.mdkt"), filepath.Join(dir, "a.mdkt")}, "same file"},
		{[]string{"gen", "--model", "lru", "-o", filepath.Join(dir, "x.mdkt")}, `unknown model "lru"`},
		{[]string{"gen", "--param", "zipf.HotProb=2", "-o", filepath.Join(dir, "x.mdkt")}, "zipf.HotProb = 2"},
	} {
		code, _, stderr := runMDK(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.msg)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x10
	return c
}

func itoa(i int) string { return strconv.Itoa(i) }
