package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mdk/internal/testutil"
	"mdk/linux"
	"mdk/policy"
	"mdk/sim"
	"mdk/trace"
)

// randomAccessTrace returns a trace of pages pages over windows windows
// (after shift empty windows first): page p is born in the first window
// and accessed in each later window with its own probability.
func randomAccessTrace(rng *rand.Rand, pages, windows, shift int) *trace.Trace {
	b := trace.NewBuilder(trace.DefaultHeader())
	prob := make([]float64, pages)
	for p := range prob {
		prob[p] = rng.Float64() * 0.6
	}
	for w := range windows {
		for p := range pages {
			pg := trace.Page{Page: uint64(p)}
			if w == 0 || rng.Float64() < prob[p] {
				b.Add(w+shift, trace.Access, pg)
			}
		}
	}
	return b.Trace()
}

// writeRunFrom writes a valid run directory of setting spec observed as tr:
// the decisions the simulator's, those of the first window with decisions
// kept by the page limit, those of the next one refused (locked), the
// rest out; the measured counts the simulator's minus a random amount in
// some windows (tracker slack: a residual).
func writeRunFrom(t *testing.T, rng *rand.Rand, tr *trace.Trace, spec string) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, TraceFile), testutil.EncodeBinary(t, tr), 0o644)
	ss, err := policy.Parse(spec, tr.Header.Window)
	if err != nil {
		t.Fatal(err)
	}
	decided := make([][]uint32, len(tr.Windows))
	res := sim.RunObserved(tr, ss[0], func(p uint32, _, at int) { decided[at] = append(decided[at], p) })
	var m, sk strings.Builder
	m.WriteString(strings.Join(Columns(), ",") + "\n")
	sk.WriteString("window,page,cause\n")
	var sum Summary
	phase := 0 // 0: the next window with decisions is limited, 1: refused, 2: out
	for w := range tr.Windows {
		r := Row{Window: int64(w), Alive: res.AlivePerWindow[w], Accessed: res.Accessed[w], Decided: int64(len(decided[w])),
			Promotions: res.Promotions[w], Saved: res.SavedPerWindow[w], MajFlt: -1}
		if rng.IntN(3) == 0 {
			r.Promotions -= rng.Int64N(r.Promotions + 1)
			r.Saved -= rng.Int64N(r.Saved + 1)
		}
		switch {
		case r.Decided > 0 && phase == 0:
			r.SkippedLimit = r.Decided
			for _, p := range decided[w] {
				fmt.Fprintf(&sk, "%d,%d,%s\n", w, p, CauseLimit)
			}
			sum.Skipped += r.Decided
			phase++
		case r.Decided > 0 && phase == 1:
			r.Reclaimed, r.Refused = r.Decided, r.Decided
			r.RefusedBy[linux.RefusedLocked] = r.Decided
			for _, p := range decided[w] {
				fmt.Fprintf(&sk, "%d,%d,refused:locked\n", w, p)
			}
			sum.Refused += r.Decided
			sum.Skipped += r.Decided
			phase++
		default:
			r.Reclaimed, r.Out = r.Decided, r.Decided
		}
		m.WriteString(strings.Join(r.csvRecord(), ",") + "\n")
		sum.Windows++
		sum.Decided += r.Decided
		sum.Out += r.Out
		sum.Promotions += r.Promotions
		sum.Saved += r.Saved
	}
	os.WriteFile(filepath.Join(dir, MeasuredFile), []byte(m.String()), 0o644)
	os.WriteFile(filepath.Join(dir, SkippedFile), []byte(sk.String()), 0o644)
	info := RunInfo{Setting: spec, Window: tr.Header.Window.String(), Tracker: "live", Targets: []int{42}, MaxPages: 100, Kernel: "test", Summary: &sum}
	b, _ := json.MarshalIndent(info, "", "  ")
	os.WriteFile(filepath.Join(dir, MetaFile), b, 0o644)
	return dir
}

// checkIdentities returns what is wrong with p: in every window and in
// total, recorded - measured = the sum of the causes; the counterfactual
// and measured columns are the comparison's; the total the windows' sum.
func checkIdentities(p *Predicted) []string {
	var bad []string
	var sum PredictedWindow
	for w, d := range p.Windows {
		c := p.Cmp.Windows[w]
		if got, want := d.Causes(), d.Recorded.sub(d.Measured); got != want {
			bad = append(bad, fmt.Sprintf("window %d: causes %+v, recorded - measured %+v", w, got, want))
		}
		if d.Counterfactual != (Pair{c.PredPromotions, c.PredSaved}) || d.Measured != (Pair{c.Promotions, c.Saved}) {
			bad = append(bad, fmt.Sprintf("window %d: counterfactual %+v measured %+v, comparison %+v", w, d.Counterfactual, d.Measured, c))
		}
		if d.Workload != d.Aligned.sub(d.Counterfactual) || d.Shift != d.Recorded.sub(d.Aligned) {
			bad = append(bad, fmt.Sprintf("window %d: shift %+v workload %+v do not follow their definitions", w, d.Shift, d.Workload))
		}
		sum.Recorded = sum.Recorded.add(d.Recorded)
		sum.Measured = sum.Measured.add(d.Measured)
		sum.Shift = sum.Shift.add(d.Shift)
		sum.Slack = sum.Slack.add(d.Slack)
	}
	t := p.Total
	if t.Causes() != t.Recorded.sub(t.Measured) {
		bad = append(bad, fmt.Sprintf("total: causes %+v, recorded - measured %+v", t.Causes(), t.Recorded.sub(t.Measured)))
	}
	if sum.Recorded != t.Recorded || sum.Measured != t.Measured || sum.Shift != t.Shift || sum.Slack != t.Slack {
		bad = append(bad, "total: not the windows' sum")
	}
	return bad
}

// TestPredictedIdentities checks the decomposition on constructed runs:
// random observed traces and unrelated random recordings, runs with
// limited, refused and slack pages: the causes add up to recorded -
// measured in every window and in total.
func TestPredictedIdentities(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 23))
	nonzero := map[string]bool{}
	for i := range testutil.Count(40) {
		obs := randomAccessTrace(rng, 20+rng.IntN(60), 4+rng.IntN(12), 0)
		rec := randomAccessTrace(rng, 20+rng.IntN(60), 4+rng.IntN(12), rng.IntN(3))
		spec := []string{"age:A=1", "age:A=2", "paw:P=2,wait=1"}[i%3]
		dir := writeRunFrom(t, rng, obs, spec)
		ss, _ := policy.Parse(spec, obs.Header.Window)
		p, err := ComparePredicted(dir, "rec", rec, ss[0])
		if err != nil {
			t.Fatal(err)
		}
		if bad := checkIdentities(p); len(bad) > 0 {
			t.Fatalf("trace %d, %s: %s", i, spec, strings.Join(bad, "\n"))
		}
		for name, v := range map[string]Pair{"shift": p.Total.Shift, "workload": p.Total.Workload, "refused": p.Total.Refused,
			"limits": p.Total.Limits, "slack": p.Total.Slack} {
			if v != (Pair{}) {
				nonzero[name] = true
			}
		}
	}
	for _, name := range []string{"shift", "workload", "refused", "limits", "slack"} {
		if !nonzero[name] {
			t.Errorf("no constructed run had a %s term: the identities were not tested with it", name)
		}
	}
}

// TestPredictedSameRecording: a recording that is the observed trace
// itself aligns at offset 0 with Jaccard 1 in every window, and its
// prediction is the counterfactual (no shift, no workload term).
func TestPredictedSameRecording(t *testing.T) {
	rng := testutil.Rand(testutil.Seed(t, 5))
	obs := randomAccessTrace(rng, 50, 12, 0)
	dir := writeRunFrom(t, rng, obs, "age:A=1")
	ss, _ := policy.Parse("age:A=1", obs.Header.Window)
	p, err := ComparePredicted(dir, "rec", obs, ss[0])
	if err != nil {
		t.Fatal(err)
	}
	if p.Offset != 0 || p.Total.Jaccard != 1 || p.Total.JaccardAligned != 1 {
		t.Errorf("offset %d, Jaccard %v/%v: want 0, 1/1", p.Offset, p.Total.Jaccard, p.Total.JaccardAligned)
	}
	for _, d := range p.Windows {
		if d.Jaccard != 1 || d.Shift != (Pair{}) || d.Workload != (Pair{}) || d.Recorded != d.Counterfactual {
			t.Errorf("window %d: Jaccard %v shift %+v workload %+v recorded %+v counterfactual %+v", d.Window, d.Jaccard, d.Shift, d.Workload, d.Recorded, d.Counterfactual)
		}
	}
}

// TestPredictedTimeShift: a recording that is the observed trace two
// windows later (two empty windows first) aligns at offset 2 with Jaccard
// 1, and the whole difference of the predictions is the time shift: the
// workload term is 0 in every window.
func TestPredictedTimeShift(t *testing.T) {
	for _, shift := range []int{1, 2, 3} {
		seed := uint64(11 + shift)
		obs := randomAccessTrace(testutil.Rand(seed), 50, 12, 0)
		rec := randomAccessTrace(testutil.Rand(seed), 50, 12, shift)
		dir := writeRunFrom(t, testutil.Rand(seed), obs, "age:A=1")
		ss, _ := policy.Parse("age:A=1", obs.Header.Window)
		p, err := ComparePredicted(dir, "rec", rec, ss[0])
		if err != nil {
			t.Fatal(err)
		}
		if p.Offset != shift || p.Total.JaccardAligned != 1 {
			t.Fatalf("shift %d: offset %d, aligned Jaccard %v: want %d, 1", shift, p.Offset, p.Total.JaccardAligned, shift)
		}
		if p.Total.Shift == (Pair{}) {
			t.Errorf("shift %d: no time-shift term", shift)
		}
		for _, d := range p.Windows {
			if d.Workload != (Pair{}) {
				t.Errorf("shift %d, window %d: workload %+v, want 0 (recorded %+v aligned %+v counterfactual %+v)", shift, d.Window, d.Workload, d.Recorded, d.Aligned, d.Counterfactual)
			}
		}
		if bad := checkIdentities(p); len(bad) > 0 {
			t.Fatal(strings.Join(bad, "\n"))
		}
	}
}

// TestPredictedRefusesOtherWindows: a recording with other windows or
// pages than the run is an error naming the recording.
func TestPredictedRefusesOtherWindows(t *testing.T) {
	rng := testutil.Rand(1)
	obs := randomAccessTrace(rng, 20, 6, 0)
	dir := writeRunFrom(t, rng, obs, "age:A=1")
	ss, _ := policy.Parse("age:A=1", obs.Header.Window)
	rec := randomAccessTrace(rng, 20, 6, 0)
	rec.Header.Window *= 2
	if _, err := ComparePredicted(dir, "rec.mdkt", rec, ss[0]); err == nil || !strings.Contains(err.Error(), "rec.mdkt: windows of") {
		t.Errorf("other window: %v", err)
	}
	rec.Header.Window = obs.Header.Window
	rec.Header.PageSize *= 2
	if _, err := ComparePredicted(dir, "rec.mdkt", rec, ss[0]); err == nil || !strings.Contains(err.Error(), "rec.mdkt: pages of") {
		t.Errorf("other page size: %v", err)
	}
}

// TestPredictedOutputs: the text, CSV and JSON forms hold the totals and
// the identity.
func TestPredictedOutputs(t *testing.T) {
	rng := testutil.Rand(3)
	obs := randomAccessTrace(rng, 40, 8, 0)
	rec := randomAccessTrace(rng, 40, 9, 1)
	dir := writeRunFrom(t, rng, obs, "age:A=1")
	ss, _ := policy.Parse("age:A=1", obs.Header.Window)
	p, err := ComparePredicted(dir, "rec", rec, ss[0])
	if err != nil {
		t.Fatal(err)
	}
	var txt, cs, js bytes.Buffer
	if err := p.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteCSV(&cs); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("promotions: recorded - measured = %d = ", p.Total.Recorded.Promotions-p.Total.Measured.Promotions)
	if !strings.Contains(strings.ReplaceAll(txt.String(), "\n  ", " "), want) {
		t.Errorf("text lacks %q:\n%s", want, txt.String())
	}
	if n := strings.Count(cs.String(), "\n"); n != len(p.Windows)+1 {
		t.Errorf("csv has %d lines, want %d", n, len(p.Windows)+1)
	}
	var got struct {
		Total  PredictedWindow `json:"total"`
		Offset int             `json:"offset"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Total != p.Total || got.Offset != p.Offset {
		t.Errorf("json total %+v offset %d, want %+v %d", got.Total, got.Offset, p.Total, p.Offset)
	}
}
