package beam_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"mdk/fleet"
	fleetbeam "mdk/fleet/beam"
	"mdk/fleet/fleettest"
	"mdk/trace"
)

// TestMain runs the pipelines on Beam's default test runner, prism, in
// this process (loopback workers, no Docker, no network).
func TestMain(m *testing.M) { ptest.Main(m) }

var specs = []string{"age:A=0..20/4", "vmin:T=0|3", "paw:P=2|6,wait=1", "pace:P=3|inf,A=2", "opp:r=2%|5%"}

// TestPipeline runs the pipeline on prism over 55 generated traces of every
// gen model and several sizes plus a broken one, checks the fleet numbers
// against sums of per-trace mpc runs, and checks that mdk fleet --local
// writes the same bytes.
func TestPipeline(t *testing.T) {
	dir := t.TempDir()
	paths, err := fleettest.Write(dir, 55)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fleet.Config{Policies: specs, SLO: "max_pr<=2%", Window: trace.DefaultWindow}
	beamOut := runPipeline(t, cfg, paths, filepath.Join(dir, "beam-out"), 0)

	// The numbers, against per-trace mpc runs summed here.
	plan, err := cfg.Compile()
	if err != nil {
		t.Fatal(err)
	}
	sums, failed, err := fleettest.Compute(paths, specs, cfg.Window, plan.SLO)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || failed[0] != paths[len(paths)-1] {
		t.Fatalf("failed %v, want the broken trace alone", failed)
	}
	var view struct {
		Jobs, Failed   int
		FootprintBytes int64 `json:"footprint_bytes"`
		Settings       []struct {
			Policy, Params   string
			Jobs             int64
			SavedPageWindows int64   `json:"saved_page_windows"`
			AvgSavedBytes    float64 `json:"avg_saved_bytes"`
			Savings          float64
			BreakingJobs     int64 `json:"breaking_jobs"`
		}
	}
	b, err := os.ReadFile(filepath.Join(beamOut, "fleet.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &view); err != nil {
		t.Fatal(err)
	}
	if view.Jobs != len(paths) || view.Failed != 1 || len(view.Settings) != len(sums) {
		t.Fatalf("jobs %d failed %d settings %d, want %d 1 %d", view.Jobs, view.Failed, len(view.Settings), len(paths), len(sums))
	}
	for i, s := range view.Settings {
		w := sums[i]
		avg, _ := w.SavedBytes.Float64()
		sav, _ := new(big.Rat).Quo(w.SavedBytes, big.NewRat(w.FootprintBytes, 1)).Float64()
		if s.Jobs != w.Jobs || s.SavedPageWindows != w.Saved || s.AvgSavedBytes != avg || s.Savings != sav ||
			s.BreakingJobs != w.Breaking || view.FootprintBytes != w.FootprintBytes {
			t.Errorf("%s:%s: jobs %d saved %d avg %v savings %v breaking %d; want %d %d %v %v %d",
				s.Policy, s.Params, s.Jobs, s.SavedPageWindows, s.AvgSavedBytes, s.Savings, s.BreakingJobs,
				w.Jobs, w.Saved, avg, sav, w.Breaking)
		}
	}
	jobs, _ := os.ReadFile(filepath.Join(beamOut, "jobs.csv"))
	if !bytes.Contains(jobs, []byte("broken.mdkt")) {
		t.Errorf("jobs.csv does not report the broken trace")
	}

	// Local mode: the same bytes in every file.
	f, err := plan.RunLocal(context.Background(), paths, fleet.OpenFile, 2)
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, f, beamOut, filepath.Join(dir, "local-out"))
}

// TestPipelineControllers runs a fleet with a controller (auto) beside
// fixed settings on prism and wants the bytes of mdk fleet --local, the
// controller's row among the settings.
func TestPipelineControllers(t *testing.T) {
	dir := t.TempDir()
	paths, err := fleettest.Write(dir, 6)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fleet.Config{Policies: []string{"age:A=0..12/3", "auto:age,A=0..12,slo=max_pr<=5%,history=6,every=2"}, SLO: "max_pr<=2%", Window: trace.DefaultWindow}
	beamOut := runPipeline(t, cfg, paths, filepath.Join(dir, "beam-out"), 0)
	plan, err := cfg.Compile()
	if err != nil {
		t.Fatal(err)
	}
	f, err := plan.RunLocal(context.Background(), paths, fleet.OpenFile, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Settings); n != 6 || !f.Settings[n-1].Controller {
		t.Fatalf("%d settings rows, want 5 of age and the controller's last", n)
	}
	sameFiles(t, f, beamOut, filepath.Join(dir, "local-out"))
	if b, _ := os.ReadFile(filepath.Join(beamOut, "settings.csv")); !bytes.Contains(b, []byte("\nauto,")) {
		t.Errorf("settings.csv has no controller row:\n%s", b)
	}
}

// runPipeline runs the fleet pipeline of cfg over paths on the test runner,
// partitioned traces cut into at most split pieces (fleetbeam.Build),
// writing into out, and returns out.
func runPipeline(t *testing.T, cfg fleet.Config, paths []string, out string, split int) string {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if err := fleetbeam.Build(s, cfg, paths, out, split); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline on %s: %v", ptest.DefaultRunner(), err)
	}
	return out
}

// sameFiles writes the local fleet f into localOut and wants the bytes of
// every file in beamOut.
func sameFiles(t *testing.T, f *fleet.Fleet, beamOut, localOut string) {
	t.Helper()
	if err := fleetbeam.WriteDir(context.Background(), f, localOut); err != nil {
		t.Fatal(err)
	}
	for _, name := range fleet.Files {
		a, err1 := os.ReadFile(filepath.Join(beamOut, name))
		b, err2 := os.ReadFile(filepath.Join(localOut, name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: Beam and local outputs differ (%v, %v)", name, err1, err2)
		}
	}
}

// TestPipelineSplit runs on prism a fleet of traces of every gen model and
// a real trace, each partitioned into 64 partitions and cut into pieces
// (one per partition, then 5 per trace) walked by separate workers and
// merged per job, beside their unpartitioned copies (run whole), and wants
// the bytes of mdk fleet --local (which runs each partitioned trace on
// every core of one machine): every job's curve, tuning and the fleet's
// sums, integer for integer.
func TestPipelineSplit(t *testing.T) {
	dir := t.TempDir()
	parts, whole, err := fleettest.WritePartitioned(dir, 64)
	if err != nil {
		t.Fatal(err)
	}
	paths := append(slices.Clone(parts), whole...)
	cfg := fleet.Config{Policies: specs, SLO: "max_pr<=2%", Window: trace.DefaultWindow}
	plan, err := cfg.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(plan.Pieces(context.Background(), parts[0], fleet.OpenFile, 0)); n != 64 {
		t.Fatalf("%s: %d pieces, want 64", parts[0], n)
	}
	f, err := plan.RunLocal(context.Background(), paths, fleet.OpenFile, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, split := range []int{0, 5} {
		out := runPipeline(t, cfg, paths, filepath.Join(dir, fmt.Sprint("beam-out-", split)), split)
		sameFiles(t, f, out, filepath.Join(dir, "local-out"))
	}
	// The partitioned and unpartitioned copies' curves are the same.
	b, err := os.ReadFile(filepath.Join(dir, "local-out", "curves.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		job, rest, _ := strings.Cut(line, ",")
		rows[job] = append(rows[job], rest)
	}
	for i := range parts {
		if !slices.Equal(rows[parts[i]], rows[whole[i]]) || len(rows[parts[i]]) == 0 {
			t.Errorf("%s: its curve differs from %s's", parts[i], whole[i])
		}
	}
}
