package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"mdk/gbdt"
	"mdk/policy"
	"mdk/result"
	"mdk/tier"
	"mdk/tune"
)

// Config is what a fleet run computes. It is plain data (it encodes to JSON)
// so that a distributed runner can ship it to its workers, which compile it
// with [Config.Compile].
type Config struct {
	// Policies are policy specs (SPEC section 5); a bare name is the
	// policy's default grid. Empty means policy.DefaultPolicies (and lopp
	// with a Model). lopp specs need Model.
	// Controller specs (auto:..., docs/policies.md) may be among them; with
	// controllers alone there are no fixed settings.
	Policies []string `json:"policies"`
	// SLO is tune's STAT<=RATE ("max_pr<=2%"); empty means curves only, no
	// tuning and no breaking jobs.
	SLO string `json:"slo"`
	// Model is L-OPP's model file (mdk lopp train's JSON, gbdt.ReadJSON),
	// the same for every job; it travels with the config to every worker.
	// Nil: no model, and lopp specs are refused.
	Model json.RawMessage `json:"model,omitempty"`
	// Window is the window length the specs are parsed with. Policy
	// parameters count windows, so every job must have this window length;
	// a job with another one fails with an error saying so.
	Window time.Duration `json:"window"`
	// Tier, if set, is the far tier whose figures turn savings and
	// promotions into net saved bytes and slowdown (docs/tiers.md).
	Tier *tier.Tier `json:"tier,omitempty"`
	// SamplePPM, SampleSeed and SampleGroups, if SamplePPM is set, run
	// every job on a sample of its pages (mpc.Options.Sample): its numbers
	// are estimates, and each curve point has its error bounds. A job whose
	// trace was recorded sampled is sampled without them.
	SamplePPM    int64  `json:"sample_ppm,omitempty"`
	SampleSeed   uint64 `json:"sample_seed,omitempty"`
	SampleGroups int    `json:"sample_groups,omitempty"`
}

// Plan is a compiled [Config]: the settings every job runs, in order.
type Plan struct {
	Config Config
	SLO    *tune.SLO // nil without an SLO
	// Settings are the requested settings, in spec order; with an SLO,
	// All is Settings followed by tune's yardstick settings (OPP).
	Settings []policy.Setting
	All      []policy.Setting
	// Names are the policies in first-seen order; Groups their indexes in
	// Settings.
	Names  []string
	Groups map[string][]int
	// Controllers are the controller specs (auto:..., gswap, damos, senpai) among the policies,
	// in spec order: each job runs each of them over its whole trace
	// (sim.RunControlled), after the settings in its curve.
	Controllers []policy.Controller
}

// compileController parses a controller spec (auto, gswap, damos, senpai:
// tune.ParseController), a tier SLO or goal costed on the plan's tier.
func (p *Plan) compileController(spec string) (policy.Controller, error) {
	c := p.Config
	a, err := tune.ParseController(spec, c.Window, c.Tier)
	if err != nil {
		if _, ok := err.(*policy.SpecError); ok {
			return nil, err
		}
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if c.SamplePPM != 0 {
		return nil, fmt.Errorf("fleet: %s: a controller runs on every page of its job, not on a sample (--sample)", spec)
	}
	return a, nil
}

// Compile parses the config.
func (c Config) Compile() (*Plan, error) {
	if c.Window <= 0 {
		return nil, fmt.Errorf("fleet: window length %v is not positive", c.Window)
	}
	p := &Plan{Config: c}
	if c.SLO != "" {
		slo, err := tune.ParseSLO(c.SLO)
		if err != nil {
			return nil, err
		}
		if slo.IsTier() {
			return nil, fmt.Errorf("SLO %s: mdk fleet tunes on a promotion-rate statistic (max_pr, p99_pr, p98_pr, mean_pr); an SLO on the tier's slowdown is mdk tune's (--tier)", slo)
		}
		p.SLO = &slo
	}
	var specs []string
	for _, s := range c.Policies {
		if !tune.IsController(s) {
			specs = append(specs, s)
			continue
		}
		a, err := p.compileController(s)
		if err != nil {
			return nil, err
		}
		p.Controllers = append(p.Controllers, a)
	}
	if len(specs) > 0 || len(p.Controllers) == 0 { // controllers alone: no fixed settings
		var o policy.SpecOptions
		if len(c.Model) > 0 {
			m, err := gbdt.ReadJSON(bytes.NewReader(c.Model))
			if err != nil {
				return nil, fmt.Errorf("fleet: the lopp model: %w", err)
			}
			o.Model = m
		}
		ss, err := policy.ParseSpecs(specs, c.Window, o)
		if errors.Is(err, policy.ErrNoModel) {
			return nil, errors.New("fleet: lopp needs a model, the same for every job: give one with --model FILE (train it with mdk lopp train)")
		} else if err != nil {
			return nil, err
		}
		p.Settings = ss
	}
	p.Names, p.Groups = result.ByPolicy(len(p.Settings), func(i int) string { return p.Settings[i].Policy() })
	if len(p.Settings) == 0 && len(p.Controllers) == 0 {
		return nil, errors.New("fleet: no policy settings")
	}
	p.All = p.Settings
	if p.SLO != nil {
		p.All = append(p.Settings[:len(p.Settings):len(p.Settings)], tune.YardstickSettings(c.Window, *p.SLO)...)
	}
	return p, nil
}

// ReadList parses a job list: one trace path or URL per line; blank lines
// and lines starting with # are skipped, surrounding spaces trimmed.
func ReadList(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// IsGlob reports whether s has glob metacharacters (* ? [).
func IsGlob(s string) bool { return strings.ContainsAny(s, "*?[") }
