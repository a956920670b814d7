package cli

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"mdk/policy"
	"mdk/trace"
	"mdk/tune"
)

// TestExamplePolicySpecs checks that every policy spec quoted in a
// command's help examples parses (with 30 s windows), so the help never
// shows a command that fails on its spec.
func TestExamplePolicySpecs(t *testing.T) {
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	spec := regexp.MustCompile(`(?:-p|--policy) +'([^']+)'|(?:-p|--policy) +([a-z]+(?::[^ ]+)?)`)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, m := range spec.FindAllStringSubmatch(c.Example, -1) {
			s := m[1] + m[2]
			n++
			if tune.IsController(s) {
				if _, err := tune.ParseAuto(s, trace.DefaultWindow); err != nil {
					t.Errorf("mdk %s example: controller spec %q: %v", c.CommandPath(), s, err)
				}
				continue
			}
			if _, err := policy.Parse(s, trace.DefaultWindow); err != nil {
				t.Errorf("mdk %s example: policy spec %q: %v", c.CommandPath(), s, err)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	for _, mk := range commands {
		walk(mk(e))
	}
	if n < 5 {
		t.Fatalf("found only %d specs in the examples; the pattern is broken", n)
	}
}
