package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun writes a run directory of mdk agent by hand: SPEC section 4's
// trace observed, age:A=1 applied exactly (measured promotions are the
// SPEC's: 0 0 1 0 0 1 0 1 0 1), and a replay workload that saw slow touches
// only in window 2 (3 touches, 30 us in all) and window 5 (2, 14 us).
func writeRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ex, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "trace.mdkt"), ex, 0o644)
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"setting": "age:A=1", "window": "30s", "tracker": "replay", "targets": [1], "kernel": "test"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "skipped.csv"), []byte("window,page,cause\n"), 0o644)
	promos := []int{0, 0, 1, 0, 0, 1, 0, 1, 0, 1}
	saved := []int{0, 3, 2, 4, 3, 2, 3, 2, 3, 2} // age:A=1's saved pages per window
	slow := map[int][2]int{2: {3, 30000}, 5: {2, 14000}}
	var b strings.Builder
	b.WriteString("window,promotions,saved,majflt,pswpin,pswpout,refault_anon,slow_touches,slow_ns\n")
	for w := range 10 {
		fmt.Fprintf(&b, "%d,%d,%d,0,0,0,0,%d,%d\n", w, promos[w], saved[w], slow[w][0], slow[w][1])
	}
	os.WriteFile(filepath.Join(dir, "measured.csv"), []byte(b.String()), 0o644)
	return dir
}

// TestAgentCompareTier checks the tier section of mdk agent compare on a
// hand-made run: the quarter tier charges 5 us per promotion, so the model
// stalls 5 us in windows 2, 5, 7 and 9 (20 us over 10 windows of 30 s, a
// slowdown of 20e-6/300), and the workload measured 44 us in 5 slow touches.
func TestAgentCompareTier(t *testing.T) {
	dir := writeRun(t)
	code, out, errs := run(t, "", "agent", "compare", dir, "--tier", quarterTier(t), "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var got struct {
		Setting   string `json:"setting"`
		TierModel struct {
			Windows []struct {
				ModelPredNS float64 `json:"model_pred_stall_ns"`
				ModelNS     float64 `json:"model_stall_ns"`
				SlowTouches int64   `json:"slow_touches"`
				SlowNS      int64   `json:"slow_ns"`
			} `json:"windows"`
			Total struct {
				ModelNS     float64 `json:"model_stall_ns"`
				SlowTouches int64   `json:"slow_touches"`
				SlowNS      int64   `json:"slow_ns"`
			} `json:"total"`
			Promotions        int64   `json:"promotions"`
			MeasuredPerSlowNS float64 `json:"measured_ns_per_slow_touch"`
			ModelSlowdown     float64 `json:"model_slowdown"`
			MeasuredSlowdown  float64 `json:"measured_slowdown"`
		} `json:"tier_model"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := got.TierModel
	if got.Setting != "age:A=1" || len(m.Windows) != 10 {
		t.Fatalf("setting %q, %d windows:\n%s", got.Setting, len(m.Windows), out)
	}
	for w, d := range m.Windows {
		want := 0.0
		if w == 2 || w == 5 || w == 7 || w == 9 {
			want = 5000
		}
		if d.ModelPredNS != want || d.ModelNS != want {
			t.Errorf("window %d: model stall %v predicted, %v measured; want %v", w, d.ModelPredNS, d.ModelNS, want)
		}
	}
	if m.Total.ModelNS != 20000 || m.Total.SlowTouches != 5 || m.Total.SlowNS != 44000 || m.Promotions != 4 || m.MeasuredPerSlowNS != 8800 {
		t.Errorf("totals %+v, promotions %d, %v ns per slow touch", m.Total, m.Promotions, m.MeasuredPerSlowNS)
	}
	if m.ModelSlowdown != 20000/300e9 || m.MeasuredSlowdown != 44000/300e9 {
		t.Errorf("slowdowns: model %v, measured %v", m.ModelSlowdown, m.MeasuredSlowdown)
	}
	// Text and CSV carry the same section.
	code, out, errs = run(t, "", "agent", "compare", dir, "--tier", quarterTier(t))
	if code != ExitOK || !strings.Contains(out, "the tier model beside the workload's touches") || !strings.Contains(out, "5 slow touches") {
		t.Errorf("text: exit %d %s\n%s", code, errs, out)
	}
	code, out, _ = run(t, "", "agent", "compare", dir, "--tier", quarterTier(t), "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != ExitOK || len(lines) != 11 || !strings.HasSuffix(lines[0], ",model_pred_stall_ns,model_stall_ns,slow_touches,slow_ns") || !strings.HasSuffix(lines[3], ",5000,5000,3,30000") {
		t.Errorf("csv: exit %d\n%s", code, out)
	}
	// Without --tier, no tier section.
	_, out, _ = run(t, "", "agent", "compare", dir)
	if strings.Contains(out, "tier model") {
		t.Errorf("tier section without --tier:\n%s", out)
	}
}
