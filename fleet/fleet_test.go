package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mdk/fleet"
	"mdk/fleet/fleettest"
	"mdk/internal/testutil"
	"mdk/trace"
	"mdk/tune"
)

var specs = []string{"age:A=0..12/3", "vmin:T=0|2|5", "pace:P=2|inf,A=2|6", "opp:r=1%|5%"}

func plan(t testing.TB, slo string) *fleet.Plan {
	t.Helper()
	p, err := fleet.Config{Policies: specs, SLO: slo, Window: trace.DefaultWindow}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunMatchesTune checks a job's tuned settings against mdk tune on the
// same trace: the same choice, the same evaluation metrics, the same
// yardstick.
func TestRunMatchesTune(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 5)
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, "max_pr<=5%")
	for _, path := range paths[:5] {
		jr, err := p.RunJob(context.Background(), path, fleet.OpenFile)
		if err != nil || jr.Error != "" {
			t.Fatalf("%s: %v %s", path, err, jr.Error)
		}
		r, c, err := trace.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := tune.Run(context.Background(), tune.Config{SLO: *p.SLO, Policies: specs, Traces: []tune.Input{{Name: path, Reader: r}}})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rep.Policies, jr.Tuned); diff != "" {
			t.Errorf("%s: tuned (-tune +fleet):\n%s", path, diff)
		}
		if diff := cmp.Diff(rep.OPP, jr.OPP); diff != "" {
			t.Errorf("%s: yardstick (-tune +fleet):\n%s", path, diff)
		}
	}
}

// TestMergeOrder merges the same accumulators in many orders and groupings
// and wants the same bytes every time.
func TestMergeOrder(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 8)
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, "max_pr<=2%")
	var accs [][]fleet.Acc
	for _, path := range paths {
		jr, err := p.RunJob(context.Background(), path, fleet.OpenFile)
		if err != nil {
			t.Fatal(err)
		}
		if a := p.Accs(&jr); a != nil {
			accs = append(accs, a)
		}
	}
	fold := func(order []int, tree bool) []byte {
		var out []fleet.Acc
		for k := range accs[0] {
			xs := make([]fleet.Acc, len(order))
			for i, j := range order {
				xs[i] = accs[j][k]
			}
			for len(xs) > 1 { // pairwise (a tree) or left to right
				var next []fleet.Acc
				step := 2
				if !tree {
					step = len(xs)
				}
				for i := 0; i < len(xs); i += step {
					a := xs[i]
					for _, b := range xs[i+1 : min(i+step, len(xs))] {
						a = a.Merge(b)
					}
					next = append(next, a)
				}
				xs = next
			}
			out = append(out, xs[0])
		}
		b, _ := json.Marshal(out)
		return b
	}
	idx := make([]int, len(accs))
	for i := range idx {
		idx[i] = i
	}
	want := fold(idx, false)
	rng := testutil.Rand(testutil.Seed(t, 1))
	for range 20 {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for _, tree := range []bool{false, true} {
			if got := fold(slices.Clone(idx), tree); !bytes.Equal(got, want) {
				t.Fatalf("order %v tree %v: merged accumulators differ", idx, tree)
			}
		}
	}
}

// TestLocalFleet runs a fleet locally and checks every per-setting number
// against sums of per-trace mpc runs, and the failed job.
func TestLocalFleet(t *testing.T) {
	dir := t.TempDir()
	paths, err := fleettest.Write(dir, 15)
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join(dir, "missing.mdkt"))
	p := plan(t, "max_pr<=2%")
	f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 3)
	if err != nil {
		t.Fatal(err)
	}
	sums, failed, err := fleettest.Compute(paths, specs, trace.DefaultWindow, p.SLO)
	if err != nil {
		t.Fatal(err)
	}
	if f.Jobs != len(paths) || f.Failed != len(failed) || len(failed) != 2 {
		t.Fatalf("jobs %d failed %d, want %d and %d (%v)", f.Jobs, f.Failed, len(paths), len(failed), failed)
	}
	for _, j := range f.JobResults {
		if isFailed := slices.Contains(failed, j.Job); isFailed != (j.Error != "") {
			t.Errorf("%s: error %q, want failed=%v", j.Job, j.Error, isFailed)
		}
	}
	checkSettings(t, f, sums)
	// The tuned fleet savings are the sum of the jobs' own evaluation runs.
	for pi, pr := range f.Policies {
		saved, breaking, found := new(big.Rat), int64(0), int64(0)
		for _, j := range f.JobResults {
			if j.Error != "" || !j.Tuned[pi].Found {
				continue
			}
			e := j.Tuned[pi].Eval
			found++
			saved.Add(saved, big.NewRat(e.SavedPageWindows*j.PageSize, int64(e.Windows)))
			if !e.MeetsSLO {
				breaking++
			}
		}
		want, _ := new(big.Rat).Quo(saved, big.NewRat(f.FootprintBytes, 1)).Float64()
		if pr.Tuned.Savings != want || pr.Tuned.BreakingJobs != breaking || pr.TunedFound != found {
			t.Errorf("%s tuned: savings %v breaking %d found %d, want %v %d %d", pr.Policy, pr.Tuned.Savings, pr.Tuned.BreakingJobs, pr.TunedFound, want, breaking, found)
		}
		if pr.OPP.BreakingJobs != 0 {
			t.Errorf("%s: OPP yardstick breaks the SLO for %d jobs", pr.Policy, pr.OPP.BreakingJobs)
		}
	}
}

func checkSettings(t *testing.T, f *fleet.Fleet, sums []fleettest.Sums) {
	t.Helper()
	if len(f.Settings) != len(sums) {
		t.Fatalf("%d settings, want %d", len(f.Settings), len(sums))
	}
	for i, s := range f.Settings {
		w := sums[i]
		avg, _ := w.SavedBytes.Float64()
		sav, _ := new(big.Rat).Quo(w.SavedBytes, big.NewRat(w.FootprintBytes, 1)).Float64()
		if s.Jobs != w.Jobs || s.SavedPageWindows != w.Saved || s.AvgSavedBytes != avg || s.Savings != sav ||
			s.BreakingJobs != w.Breaking || f.FootprintBytes != w.FootprintBytes {
			t.Errorf("%s:%s: jobs %d saved %d avg %v savings %v breaking %d footprint %d; want %d %d %v %v %d %d",
				s.Policy, s.Params, s.Jobs, s.SavedPageWindows, s.AvgSavedBytes, s.Savings, s.BreakingJobs, f.FootprintBytes,
				w.Jobs, w.Saved, avg, sav, w.Breaking, w.FootprintBytes)
		}
	}
}

// TestNoSLO: curves only; no policy rows, no tuning.
func TestNoSLO(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	p := plan(t, "")
	f, err := p.RunLocal(context.Background(), paths, fleet.OpenFile, 0)
	if err != nil {
		t.Fatal(err)
	}
	sums, _, err := fleettest.Compute(paths, specs, trace.DefaultWindow, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkSettings(t, f, sums)
	if len(f.Policies) != 0 || f.Settings[0].Train != nil {
		t.Errorf("policy rows or parts without an SLO")
	}
}

// TestWindowMismatch: a trace with another window length fails alone.
func TestWindowMismatch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w10.txt")
	if err := os.WriteFile(path, []byte("mdk-trace 1\nwindow 10s\n0 a 1\n1 a 1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	jr, err := plan(t, "").RunJob(context.Background(), path, fleet.OpenFile)
	if err != nil || !strings.Contains(jr.Error, "window length 10s differs from the fleet's 30s") {
		t.Errorf("got %v %q", err, jr.Error)
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	paths, err := fleettest.Write(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "jobs.txt")
	os.WriteFile(list, []byte("# fleet\n"+paths[1]+"\n\n  "+paths[0]+"  \n"), 0o666)
	got, err := fleet.LocalSource.Expand([]string{list, filepath.Join(dir, "*.mdkt"), paths[2]})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{paths[1], paths[0], paths[2], paths[0], paths[1], paths[2]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, err := fleet.LocalSource.Expand([]string{filepath.Join(dir, "*.none")}); err == nil {
		t.Error("a glob matching nothing is not an error")
	}
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# nothing\n"), 0o666)
	if _, err := fleet.LocalSource.Expand([]string{empty}); err == nil {
		t.Error("an empty list is not an error")
	}
}

// TestWriteFiles checks the files' headers and that a failed job has a row.
func TestWriteFiles(t *testing.T) {
	paths, err := fleettest.Write(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	f, err := plan(t, "max_pr<=2%").RunLocal(context.Background(), paths, fleet.OpenFile, 1)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*bytes.Buffer{}
	err = f.WriteFiles(func(name string, data []byte) error {
		files[name] = bytes.NewBuffer(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, header := range map[string][]string{"settings.csv": fleet.SettingsHeader, "policies.csv": fleet.PoliciesHeader, "jobs.csv": fleet.JobsHeader, "curves.csv": fleet.CurvesHeader} {
		first, _, _ := strings.Cut(files[name].String(), "\n")
		if first != strings.Join(header, ",") {
			t.Errorf("%s header %q", name, first)
		}
	}
	if lines := strings.Count(files["jobs.csv"].String(), "\n"); lines != 1+2*len(f.Policies)+1 {
		t.Errorf("jobs.csv has %d lines, want header + 2 jobs x %d policies + 1 failed", lines, len(f.Policies))
	}
	if !strings.Contains(files["jobs.csv"].String(), "broken.mdkt") {
		t.Errorf("jobs.csv lacks the broken job")
	}
	var js []map[string]any
	if err := json.Unmarshal(files["jobs.json"].Bytes(), &js); err != nil || len(js) != 3 {
		t.Errorf("jobs.json: %v, %d jobs", err, len(js))
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
