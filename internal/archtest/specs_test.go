package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// specCalls returns "file:line: call" for every call of policy.Parse in
// src (one Go file, named name): a spec parsed around policy.ParseSpecs,
// the one way specs become settings (defaults, wide grids, L-OPP's model).
func specCalls(fset *token.FileSet, name string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := map[string]bool{} // the names policy is imported under
	for _, im := range f.Imports {
		if im.Path.Value == `"mdk/policy"` {
			if im.Name != nil {
				local[im.Name.Name] = true
			} else {
				local["policy"] = true
			}
		}
	}
	if len(local) == 0 {
		return nil, nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Parse" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && local[x.Name] {
			out = append(out, fset.Position(call.Pos()).String()+": "+x.Name+".Parse")
		}
		return true
	})
	return out, nil
}

// TestSpecsParsedOnce: no non-test source outside package policy calls
// policy.Parse; every command and package turns specs into settings with
// policy.ParseSpecs.
func TestSpecsParsedOnce(t *testing.T) {
	fset := token.NewFileSet()
	walkSources(t, func(rel string) bool { return rel == "policy" }, func(path string) error {
		calls, err := specCalls(fset, path, nil)
		for _, c := range calls {
			t.Errorf("%s: specs become settings through policy.ParseSpecs", c)
		}
		return err
	})
}

// TestSpecCallsCanFail: the rule finds policy.Parse under its own and
// another import name, and not ParseSpecs, ParseRate or another Parse.
func TestSpecCallsCanFail(t *testing.T) {
	src := `package x

import (
	"mdk/policy"
	pol "mdk/policy"
	"time"
)

func f(w time.Duration) {
	policy.Parse("age", w)
	pol.Parse("age", w)
	policy.ParseSpecs([]string{"age"}, w, policy.SpecOptions{})
	policy.ParseRate("2%")
	time.Parse("", "")
}
`
	got, err := specCalls(token.NewFileSet(), "broken.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "broken.go:10:") || !strings.HasPrefix(got[1], "broken.go:11:") {
		t.Fatalf("found %q, want the calls at broken.go:10 and 11", got)
	}
}
