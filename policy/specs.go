package policy

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// SpecOptions say what [ParseSpecs] makes of a list of specs beyond each
// spec's own text.
type SpecOptions struct {
	// Model is L-OPP's model ([AttachModel]); nil means none. With a model,
	// an empty list of specs means the default policies and lopp.
	Model Scorer
	// Wide expands a bare policy name to its [WideGrid] instead of its
	// [DefaultGrid]: for an axis or an SLO that is not a promotion rate (a
	// tier's slowdown), where opp's default grid stops short of what the
	// other policies' grids reach.
	Wide bool
}

// ParseSpecs turns a command's policy specs into settings, the one way
// every command and package does (mdk mpc, sim, verify, agent, tune, a
// fleet): every spec parsed with the trace's window length ([Parse]), in
// order; no spec means [DefaultPolicies] (and lopp when o.Model is set),
// each over its default grid; then the model attached to every lopp
// setting. Errors are Parse's [*SpecError]s, or AttachModel's (wrapping
// [ErrNoModel] for lopp without a model).
func ParseSpecs(specs []string, window time.Duration, o SpecOptions) ([]Setting, error) {
	if len(specs) == 0 {
		specs = DefaultPolicies
		if o.Model != nil {
			specs = append(slices.Clone(specs), "lopp")
		}
	}
	var out []Setting
	for _, s := range specs {
		if name := strings.TrimSpace(s); o.Wide && window > 0 {
			if ss := WideGrid(name, window); ss != nil {
				out = append(out, ss...)
				continue
			}
		}
		ss, err := Parse(s, window)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	if err := AttachModel(out, o.Model); err != nil {
		return nil, err
	}
	return out, nil
}

// ErrNoModel is the error (wrapped) of [AttachModel] for lopp settings
// without a model.
var ErrNoModel = errors.New("policy lopp needs a model")
