package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/fleet"
	"mdk/fleet/fleettest"
	"mdk/gbdt"
	"mdk/lopp"
	"mdk/trace"
	"mdk/tune"
)

// TestLOPPInFleet: with a model in the config (one for every job, shipped
// as JSON), a job's lopp choices, the ration included, are mdk tune's on
// the same trace with the same model (theta on the validation windows);
// the config survives a JSON round trip, as Beam ships it; lopp without a
// model is refused.
func TestLOPPInFleet(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	r, c, err := trace.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	d, err := lopp.Dataset(r, 250000, lopp.Span{From: 0, To: 20})
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	cfg := gbdt.DefaultConfig
	cfg.Rounds, cfg.MaxDepth = 5, 3
	x, y := d.Labelled()
	m, err := gbdt.Train(x, lopp.NumFeatures, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	specs := []string{"age:A=0..6/2", "lopp", "lopp:theta=0,q=1%|5%|20%"}
	conf := fleet.Config{Policies: specs, SLO: "max_pr<=5%", Window: trace.DefaultWindow, Model: buf.Bytes()}
	b, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	var back fleet.Config
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	p, err := back.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths[:3] {
		jr, err := p.RunJob(context.Background(), path, fleet.OpenFile)
		if err != nil || jr.Error != "" {
			t.Fatalf("%s: %v %s", path, err, jr.Error)
		}
		r, c, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := tune.Run(context.Background(), tune.Config{SLO: *p.SLO, Policies: specs, Model: m, Traces: []tune.Input{{Name: path, Reader: r}}})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rep.Policies, jr.Tuned); diff != "" {
			t.Errorf("%s: tuned (-tune +fleet):\n%s", path, diff)
		}
		if jr.Tuned[1].ChosenOn != "validation" {
			t.Errorf("%s: lopp chosen on %q, want validation", path, jr.Tuned[1].ChosenOn)
		}
	}
	conf.Model = nil
	if _, err := conf.Compile(); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("lopp without a model: %v", err)
	}
	conf.Model = []byte(`{"format":"mdk-gbdt"}`)
	if _, err := conf.Compile(); err == nil || !strings.Contains(err.Error(), "lopp model") {
		t.Errorf("a broken model: %v", err)
	}
}
