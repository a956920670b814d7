package policy

import (
	"fmt"
	"strings"
	"time"
)

// ControllerOptions is what a controller spec may need beyond its text.
type ControllerOptions struct {
	// Window is the trace's window length.
	Window time.Duration
	// PromotionNS is the far tier's mean cost of one promotion in
	// nanoseconds (a tier model's promotion_ns.mean), for a controller
	// that models pressure; 0 means no tier.
	PromotionNS float64
}

// ControllerDef is one controller of the spec language ("NAME:KEY=VALUE,...").
type ControllerDef struct {
	Name string
	// Parse builds the controller from the spec's keys, in the order
	// written (each "KEY=VALUE" split, spaces trimmed, no key twice).
	Parse func(keys []KeyValue, o ControllerOptions) (Controller, error)
}

// KeyValue is one "KEY=VALUE" of a controller spec.
type KeyValue struct{ Key, Value string }

// controllerDefs is the table of the controllers the policy package
// defines (mdk's auto lives in tune, which parses it itself). To add one,
// add an entry here.
var controllerDefs = []*ControllerDef{
	{Name: "gswap", Parse: parseGswap},
	{Name: "damos", Parse: parseDamos},
	{Name: "senpai", Parse: parseSenpaiKeys},
}

// ControllerNames returns the names of the controllers of the table.
func ControllerNames() []string {
	var out []string
	for _, d := range controllerDefs {
		out = append(out, d.Name)
	}
	return out
}

func lookupController(name string) *ControllerDef {
	for _, d := range controllerDefs {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// IsController reports whether spec names one of the table's controllers
// (gswap, damos, senpai) rather than a policy.
func IsController(spec string) bool {
	name, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return lookupController(strings.TrimSpace(name)) != nil
}

// ParseController parses a controller spec of the table, "NAME" (its
// defaults) or "NAME:KEY=VALUE,...". Errors are [*SpecError]s.
func ParseController(spec string, o ControllerOptions) (Controller, error) {
	spec = strings.TrimSpace(spec)
	name, rest, hasKeys := strings.Cut(spec, ":")
	name = strings.TrimSpace(name)
	d := lookupController(name)
	if d == nil {
		return nil, specErrorf(spec, "unknown controller %q (known: %s)", name, strings.Join(ControllerNames(), ", "))
	}
	if o.Window <= 0 {
		return nil, specErrorf(spec, "window length must be positive, got %v", o.Window)
	}
	var kvs []KeyValue
	if hasKeys {
		seen := map[string]bool{}
		for _, part := range strings.Split(rest, ",") {
			part = strings.TrimSpace(part)
			k, v, ok := strings.Cut(part, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return nil, specErrorf(name+":"+part, "want KEY=VALUE, got %q", part)
			}
			if seen[k] {
				return nil, specErrorf(name+":"+part, "duplicate key %q", k)
			}
			seen[k] = true
			kvs = append(kvs, KeyValue{k, v})
		}
	}
	c, err := d.Parse(kvs, o)
	if err != nil {
		if _, ok := err.(*SpecError); ok {
			return nil, err
		}
		return nil, specErrorf(spec, "%s", err)
	}
	return c, nil
}

// keyError is the error of one key of controller name.
func keyError(name string, kv KeyValue, format string, args ...any) error {
	return specErrorf(name+":"+kv.Key+"="+kv.Value, format, args...)
}

// windowsUp is d in windows, rounded up.
func windowsUp(d, window time.Duration) int {
	return int((d + window - 1) / window)
}

// controllerCount parses a count key of a controller: windows or a
// duration that is a whole number of windows ([Parse]'s count rule).
func controllerCount(name string, kv KeyValue, inf bool, window time.Duration) (int, error) {
	n, err := parseCount(&Key{Name: kv.Key, Kind: Count, Inf: inf}, kv.Value, window)
	if err != nil {
		return 0, keyError(name, kv, "%s", err)
	}
	return n, nil
}

// unknownKey is the error of a key controller name does not take.
func unknownKey(name string, kv KeyValue, keys string) error {
	return keyError(name, kv, "unknown key %q (%s keys: %s)", kv.Key, name, keys)
}

var _ = fmt.Sprintf
