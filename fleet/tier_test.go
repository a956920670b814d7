package fleet_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/fleet"
	"mdk/fleet/fleettest"
	"mdk/tier"
	"mdk/trace"
)

// TestTier checks a fleet's tier numbers against its jobs' curves: the net
// bytes are 3/4 of the saved bytes on a tier that keeps a quarter page per
// page, the stall sums each job's promotions x 5 us over its time; and the
// config, with its tier, survives the JSON a distributed runner ships.
func TestTier(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	q := &tier.Tier{Name: "quarter", Source: "test", PageSizeBytes: 4096, StoredBytesPerPage: 1024, PromotionNs: tier.Latency{Mean: 5000}}
	cfg := fleet.Config{Policies: specs, SLO: "max_pr<=2%", Window: trace.DefaultWindow, Tier: q}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var back fleet.Config
	if err := json.Unmarshal(js, &back); err != nil || !cmp.Equal(cfg, back) {
		t.Fatalf("config JSON round trip: %v %s", err, cmp.Diff(cfg, back))
	}
	p, err := back.Compile()
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range f.Settings {
		if s.Tier == nil {
			t.Fatalf("%s:%s has no tier numbers", s.Policy, s.Params)
		}
		if got, want := s.Tier.NetAvgSavedBytes, 0.75*s.AvgSavedBytes; !near(got, want) {
			t.Errorf("%s:%s net %v, want %v", s.Policy, s.Params, got, want)
		}
		if got, want := s.Tier.TierBytes, 0.25*s.AvgSavedBytes; !near(got, want) {
			t.Errorf("%s:%s tier bytes %v, want %v", s.Policy, s.Params, got, want)
		}
		var sum, most float64
		var jobs int
		for _, j := range f.JobResults {
			if j.Error != "" {
				continue
			}
			jobs++
			x := float64(j.Curve[i].Promotions) * 5000 / (float64(j.Windows) * float64(trace.DefaultWindow.Nanoseconds()))
			sum += x
			most = max(most, x)
		}
		if !near(s.Tier.StallSecondsPerSecond, sum) || !near(s.Tier.MeanSlowdown, sum/float64(jobs)) || !near(s.Tier.MaxJobSlowdown, most) {
			t.Errorf("%s:%s stall %+v, want sum %v, max %v over %d jobs", s.Policy, s.Params, s.Tier, sum, most, jobs)
		}
	}
	for _, pr := range f.Policies {
		if pr.Tier == nil || !near(pr.Tier.TunedNetAvgSavedBytes, 0.75*pr.Tuned.AvgSavedBytes) || !near(pr.Tier.OPPNetAvgSavedBytes, 0.75*pr.OPP.AvgSavedBytes) {
			t.Errorf("%s: tier %+v, tuned %v, opp %v", pr.Policy, pr.Tier, pr.Tuned.AvgSavedBytes, pr.OPP.AvgSavedBytes)
		}
	}
	// Without a tier, no tier numbers.
	f, err = plan(t, "max_pr<=2%").RunLocal(context.Background(), paths, fleet.OpenFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Tier != nil || f.Settings[0].Tier != nil || f.Policies[0].Tier != nil {
		t.Error("tier numbers without a tier")
	}
}

func near(a, b float64) bool {
	d := a - b
	return d <= 1e-9*max(1, b) && -d <= 1e-9*max(1, b)
}
