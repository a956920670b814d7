package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// kernelOwner is the one package that opens the kernel's files.
const kernelOwner = "linux"

// kernelExempt are packages whose /proc and /sys paths are not the running
// kernel's files: the QEMU harness builds a guest's root file system (its
// mount points) and checks the host for KVM before any guest runs.
var kernelExempt = []string{"internal/vmtest", "internal/vmtest/workload"}

// kernelPath reports whether the string literal s names a path of procfs
// or sysfs: "/proc", "/sys", or a path below either ("/proc/%d/maps").
func kernelPath(s string) bool {
	for _, root := range []string{"/proc", "/sys"} {
		if s == root || strings.HasPrefix(s, root+"/") {
			return true
		}
	}
	return false
}

// kernelLiterals returns "file:line: literal" for every string literal of
// src (one Go file, named name) that names a procfs or sysfs path.
func kernelLiterals(fset *token.FileSet, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && kernelPath(s) {
			out = append(out, fset.Position(lit.Pos()).String()+": "+lit.Value)
		}
		return true
	})
	return out, nil
}

// TestOnlyLinuxOpensKernelFiles: no non-test source outside package linux
// names a /proc or /sys path; everything else reaches the kernel through
// linux.FS, rooted where the caller says.
func TestOnlyLinuxOpensKernelFiles(t *testing.T) {
	fset := token.NewFileSet()
	walkSources(t, func(rel string) bool { return rel == kernelOwner || slices.Contains(kernelExempt, rel) }, func(path string) error {
		lits, err := kernelLiterals(fset, path, nil)
		for _, l := range lits {
			t.Errorf("%s: only package %s opens the kernel's files (use linux.FS)", l, kernelOwner)
		}
		return err
	})
}

// walkSources calls fn with the path of every non-test Go file of the
// module outside testdata and hidden directories, and outside the package
// directories (relative, slash-separated) for which skip is true; it fails
// t on an error, or if it found fewer than 50 files (a wrong root).
func walkSources(t *testing.T, skip func(rel string) bool, fn func(path string) error) {
	t.Helper()
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			n := d.Name()
			if path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || skip(filepath.ToSlash(filepath.Dir(rel))) {
			return nil
		}
		files++
		return fn(path)
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned only %d files", files)
	}
}

// TestKernelLiteralsCanFail: the rule finds the paths of a file that opens
// /proc and /sys itself, and not words that only mention them.
func TestKernelLiteralsCanFail(t *testing.T) {
	src := `package x

import "os"

func f(pid int) {
	os.ReadFile("/proc/swaps")
	os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	os.Open(` + "`/sys/kernel/mm/page_idle/bitmap`" + `)
	_ = "/sys"
	_ = "see /proc/swaps"
	_ = "/process"
	_ = "/system/x"
}
`
	got, err := kernelLiterals(token.NewFileSet(), "broken.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("found %d kernel paths, want 4: %q", len(got), got)
	}
	for i, line := range []string{"broken.go:6:", "broken.go:7:", "broken.go:8:", "broken.go:9:"} {
		if !strings.HasPrefix(got[i], line) {
			t.Errorf("finding %d = %q, want it at %s", i, got[i], line)
		}
	}
}
