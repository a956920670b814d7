package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layers are the rows of the diagram in docs/architecture.md, bottom first:
// a package may import (outside its tests) only packages of lower layers,
// never one of its own layer or above. A new package must be given a layer
// here and drawn in the diagram.
var layers = [][]string{
	{"trace", "result", "linux", "internal/outfile", "internal/testsum", "internal/vmtest", "internal/vmtest/workload", "internal/e2e", "internal/agentguest"},
	{"policy", "tier", "stats", "gen", "importer", "workload", "internal/testutil", "internal/memlimit", "gbdt", "internal/vmtest/workload/mdk-workload"},
	{"sim", "mpc", "lopp", "collect", "calibrate"},
	{"verify", "tune", "agent", "headroom"},
	{"report", "fleet", "fleet/fleettest"},
	{"fleet/beam"},
	{"internal/cli", "cmd/mdk-fleet"},
	{"cmd/mdk"},
}

// only lists packages whose mdk imports are restricted further: the core
// interfaces (policy) see the trace alone, not L-OPP's model (gbdt).
var only = map[string][]string{
	"policy": {"trace"},
}

// never lists imports the layers would allow but the design forbids.
var never = map[string][]string{
	"report": {"mpc", "sim", "collect"}, // rows are picked in result; it never touches /proc
	"sim":    {"gbdt"},
	"mpc":    {"gbdt"},
	"tune":   {"gbdt"},
	"verify": {"gbdt"},
}

// external lists outside modules only some packages may import: Beam stays
// out of the mdk binary (docs/fleet.md).
var external = map[string][]string{
	"github.com/apache/beam/": {"fleet/beam", "cmd/mdk-fleet"},
	// the kernel's files are read in one place (docs/architecture.md)
	"github.com/prometheus/procfs": {"linux"},
}

// imports returns every package of the module (by path relative to the
// module root) and the imports of its non-test files, whatever their build
// constraints.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = []string{}
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if !slices.Contains(out[pkg], p) {
				out[pkg] = append(out[pkg], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLayers(t *testing.T) {
	root := filepath.Join("..", "..")
	layer := map[string]int{}
	for i, row := range layers {
		for _, p := range row {
			layer[p] = i
		}
	}
	pkgs := imports(t, root)
	if len(pkgs) < len(layer)/2 {
		t.Fatalf("found only %d packages under %s", len(pkgs), root)
	}
	for pkg, ims := range pkgs {
		if pkg == "internal/archtest" {
			continue // this test
		}
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("package %s has no layer: give it one in layers and draw it in docs/architecture.md", pkg)
			continue
		}
		for _, im := range ims {
			for prefix, allowed := range external {
				if strings.HasPrefix(im, prefix) && !slices.Contains(allowed, pkg) {
					t.Errorf("%s imports %s: only %v may import %s", pkg, im, allowed, prefix)
				}
			}
			dep, ok := strings.CutPrefix(im, "mdk/")
			if !ok {
				continue
			}
			dl, known := layer[dep]
			switch {
			case !known:
				t.Errorf("%s imports %s, which has no layer", pkg, im)
			case dl >= l:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports go to lower layers only (docs/architecture.md)", pkg, l, dep, dl)
			case only[pkg] != nil && !slices.Contains(only[pkg], dep):
				t.Errorf("%s imports %s: it may import only %v", pkg, dep, only[pkg])
			case slices.Contains(never[pkg], dep):
				t.Errorf("%s imports %s, which docs/architecture.md forbids", pkg, dep)
			}
		}
	}
	for p := range layer {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("layers names %s, which is not a package any more", p)
		}
	}
}

// TestDiagramNamesEveryPackage: every package with a layer is drawn.
func TestDiagramNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "```")
	end := strings.Index(doc[start+3:], "```")
	if start < 0 || end < 0 {
		t.Fatal("docs/architecture.md has no diagram (a ``` block)")
	}
	diagram := doc[start+3 : start+3+end]
	for _, p := range undrawn(diagram, layers) {
		t.Errorf("the diagram of docs/architecture.md does not draw %s", p)
	}
}

// undrawn returns the packages of layers that diagram does not name as a
// whole word: "gen" inside "agent" or "vmtest" inside
// "internal/vmtest/workload" does not count.
func undrawn(diagram string, layers [][]string) []string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(diagram, func(r rune) bool {
		return !(r == '/' || r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		words[strings.Trim(w, ".")] = true
	}
	var out []string
	for _, row := range layers {
		for _, p := range row {
			if !words[p] {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestUndrawnCanFail: a diagram that names "agent" but not "gen" misses
// gen, which a substring match would have found inside "agent".
func TestUndrawnCanFail(t *testing.T) {
	got := undrawn("  3   agent ──> collect internal/vmtest/workload\n", [][]string{{"gen", "agent", "internal/vmtest", "collect", "internal/vmtest/workload"}})
	if !slices.Equal(got, []string{"gen", "internal/vmtest"}) {
		t.Errorf("undrawn = %v, want [gen internal/vmtest]", got)
	}
	if got := undrawn("gen, agent.", [][]string{{"gen", "agent"}}); len(got) != 0 {
		t.Errorf("undrawn of a diagram naming both = %v", got)
	}
}

// TestDiagramIsTheImports: each "PKG ──> DEPS" line of the diagram lists
// exactly the package's mdk imports, so the picture cannot drift.
func TestDiagramIsTheImports(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "```") + 3
	diagram := doc[start : start+strings.Index(doc[start:], "```")]
	drawn := map[string][]string{}
	var cur []string // the packages of the last arrow line
	for _, line := range strings.Split(diagram, "\n") {
		if i := strings.Index(line, "("); i >= 0 {
			line = line[:i] // a remark
		}
		lhs, rhs, arrow := strings.Cut(line, "─>")
		if !arrow {
			if cur != nil && strings.TrimSpace(line) != "" && strings.HasPrefix(line, "   ") && !strings.ContainsAny(strings.TrimSpace(line)[:1], "0123456789") {
				for _, p := range cur {
					drawn[p] = append(drawn[p], strings.Fields(line)...)
				}
				continue
			}
			cur = nil
			continue
		}
		lhs = strings.TrimRight(strings.TrimSpace(lhs), "─ ")
		f := strings.Fields(lhs)
		if len(f) > 0 && strings.Trim(f[0], "0123456789") == "" {
			lhs = strings.TrimSpace(strings.TrimPrefix(lhs, f[0])) // the layer number
		}
		cur = nil
		for _, p := range strings.Split(lhs, ",") {
			p = strings.TrimSpace(p)
			cur = append(cur, p)
			drawn[p] = append(drawn[p], strings.Fields(rhs)...)
		}
	}
	real := imports(t, filepath.Join("..", ".."))
	if len(drawn) < 10 {
		t.Fatalf("read only %d arrows from the diagram: %v", len(drawn), drawn)
	}
	for p, deps := range drawn {
		ims, ok := real[p]
		if !ok {
			t.Errorf("the diagram draws %s, which is not a package", p)
			continue
		}
		var want []string
		for _, im := range ims {
			if d, ok := strings.CutPrefix(im, "mdk/"); ok {
				want = append(want, d)
			}
		}
		slices.Sort(want)
		slices.Sort(deps)
		if !slices.Equal(want, deps) {
			t.Errorf("diagram: %s ──> %v; its imports are %v", p, deps, want)
		}
	}
	for p, ims := range real {
		if _, ok := drawn[p]; ok || p == "internal/archtest" {
			continue
		}
		for _, im := range ims {
			if strings.HasPrefix(im, "mdk/") {
				t.Errorf("%s imports %s but the diagram draws no arrow from it", p, im)
				break
			}
		}
	}
}
