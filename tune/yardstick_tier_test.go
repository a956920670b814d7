package tune

import (
	"context"
	"testing"

	"mdk/gen"
	"mdk/mpc"
	"mdk/policy"
	"mdk/trace"
)

// TestTierYardstickReachesEverySaving: on an SLO on the tier's slowdown,
// OPP's grid reaches as far as every other policy's (its wide grid, up to
// r = 100%, which reclaims every gap with g >= 1: the most any policy
// saves). With a bound every setting meets, the yardstick is then OPP at
// its most savings and no tuned policy beats it: every OPP headroom is >= 0,
// and the yardstick's savings are the most of any setting of any default
// grid on the evaluation part. With opp's default grid alone (r <= 20%),
// age:A=0 beat the "optimum" by tens of points on every gen model.
func TestTierYardstickReachesEverySaving(t *testing.T) {
	for _, model := range gen.Models {
		t.Run(model, func(t *testing.T) {
			cfg := gen.DefaultConfig
			cfg.Model, cfg.Pages, cfg.Windows, cfg.Seed = model, 3000, 40, 3
			slo := ssdSLO(t, "slowdown<=100%")
			slo.Window = cfg.Window
			rep, err := Run(context.Background(), Config{SLO: slo, Traces: []Input{{Name: model, Reader: gen.NewReader(cfg)}}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OPP == nil {
				t.Fatal("no yardstick")
			}
			for _, c := range rep.Policies {
				if !c.Found || !c.HasOPPHeadroom {
					t.Fatalf("%s: no setting or no headroom: %+v", c.Policy, c)
				}
				if c.OPPHeadroom < 0 {
					t.Errorf("%s:%s beats the yardstick opp:%s by %.2f points on the eval part", c.Policy, c.Params, rep.OPP.Params, -100*c.OPPHeadroom)
				}
			}
			// The most any default setting saves on the eval windows.
			tr, err := trace.ReadAll(gen.NewReader(cfg))
			if err != nil {
				t.Fatal(err)
			}
			ss, err := policy.ParseSpecs(nil, cfg.Window, policy.SpecOptions{})
			if err != nil {
				t.Fatal(err)
			}
			runs, err := mpc.Generate(context.Background(), tr.NewReader(), ss, mpc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			h := cfg.Windows / 2
			for i, r := range runs {
				if s := r.Restrict(h, cfg.Windows).Savings(); s > rep.OPP.Eval.Savings {
					t.Errorf("%s:%s saves %.4f on the eval part, more than the yardstick opp:%s (%.4f)", ss[i].Policy(), ss[i].Params(), s, rep.OPP.Params, rep.OPP.Eval.Savings)
				}
			}
		})
	}
}
