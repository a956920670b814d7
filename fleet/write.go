package fleet

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"mdk/result"
)

// Files lists the files [Fleet.WriteFiles] writes, in order.
var Files = []string{"fleet.json", "settings.csv", "policies.csv", "jobs.csv", "jobs.json", "curves.csv", "summary.txt"}

func ff(x float64) string { return result.FormatFloat(x) }
func fi(x int64) string   { return strconv.FormatInt(x, 10) }

// WriteFiles writes the fleet's files (docs/fleet.md), each through write
// (which writes the file of that name, in the output directory, whole).
func (f *Fleet) WriteFiles(write func(name string, data []byte) error) error {
	for _, name := range Files {
		var b bytes.Buffer
		switch name {
		case "fleet.json":
			writeJSON(&b, f)
		case "settings.csv":
			f.writeSettings(&b)
		case "policies.csv":
			f.writePolicies(&b)
		case "jobs.csv":
			f.writeJobsCSV(&b)
		case "jobs.json":
			f.writeJobsJSON(&b)
		case "curves.csv":
			f.writeCurves(&b)
		case "summary.txt":
			f.WriteSummary(&b)
		}
		if err := write(name, b.Bytes()); err != nil {
			return fmt.Errorf("fleet: %s: %w", name, err)
		}
	}
	return nil
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic("fleet: encode JSON: " + err.Error()) // plain data: cannot fail
	}
}

func writeCSV(b *bytes.Buffer, rows [][]string) {
	w := csv.NewWriter(b)
	w.WriteAll(rows) // a bytes.Buffer does not fail
}

func numCols(prefix string) []string {
	return []string{prefix + "jobs", prefix + "avg_saved_bytes", prefix + "savings", prefix + "alive_savings", prefix + "breaking_jobs", prefix + "breaking_share"}
}

func (n *Numbers) cols(withBreaking bool) []string {
	if n == nil {
		return []string{"", "", "", "", "", ""}
	}
	c := []string{fi(n.Jobs), ff(n.AvgSavedBytes), ff(n.Savings), ff(n.AliveSavings), fi(n.BreakingJobs), ff(n.BreakingShare)}
	if !withBreaking {
		c[4], c[5] = "", ""
	}
	return c
}

// SettingsHeader is the header of settings.csv.
var SettingsHeader = append(append(append([]string{"policy", "params", "footprint_bytes", "saved_page_windows"},
	numCols("")...), numCols("train_")...), numCols("eval_")...)

// TierSettingsColumns follow SettingsHeader in settings.csv with a tier.
var TierSettingsColumns = []string{"net_avg_saved_bytes", "tier_bytes", "net_savings", "stall_seconds_per_second", "mean_slowdown", "max_job_slowdown", "max_job"}

// TierPoliciesColumns follow PoliciesHeader in policies.csv with a tier.
var TierPoliciesColumns = []string{"tuned_net_avg_saved_bytes", "single_net_avg_saved_bytes", "opp_net_avg_saved_bytes"}

// SampleSettingsColumns follow SettingsHeader (and the tier's columns) in
// settings.csv when the jobs were sampled: the error bounds of the whole
// traces', the training windows' and the evaluation windows' numbers
// (empty where there are none).
var SampleSettingsColumns = append(append(errCols(""), errCols("train_")...), errCols("eval_")...)

func errCols(prefix string) []string {
	return []string{prefix + "avg_saved_bytes_err", prefix + "savings_err", prefix + "alive_savings_err"}
}

func (n *Numbers) errCols() []string {
	if n == nil || n.Err == nil {
		return []string{"", "", ""}
	}
	fp := func(x *float64) string {
		if x == nil {
			return ""
		}
		return ff(*x)
	}
	return []string{fp(n.Err.AvgSavedBytes), fp(n.Err.Savings), fp(n.Err.AliveSavings)}
}

// sampled reports whether any setting row has error bounds.
func (f *Fleet) sampled() bool {
	for _, s := range f.Settings {
		if s.Err != nil {
			return true
		}
	}
	return false
}

func (f *Fleet) writeSettings(b *bytes.Buffer) {
	header := SettingsHeader
	if f.Tier != nil {
		header = append(header[:len(header):len(header)], TierSettingsColumns...)
	}
	if f.sampled() {
		header = append(header[:len(header):len(header)], SampleSettingsColumns...)
	}
	rows := [][]string{header}
	for _, s := range f.Settings {
		row := []string{s.Policy, s.Params, fi(f.FootprintBytes), fi(s.SavedPageWindows)}
		row = append(row, s.Numbers.cols(f.SLO != "")...)
		row = append(row, s.Train.cols(true)...)
		row = append(row, s.Eval.cols(true)...)
		if t := s.Tier; t != nil {
			row = append(row, ff(t.NetAvgSavedBytes), ff(t.TierBytes), ff(t.NetSavings), ff(t.StallSecondsPerSecond), ff(t.MeanSlowdown), ff(t.MaxJobSlowdown), t.MaxJob)
		}
		if f.sampled() {
			row = append(row, s.Numbers.errCols()...)
			row = append(row, s.Train.errCols()...)
			row = append(row, s.Eval.errCols()...)
		}
		rows = append(rows, row)
	}
	writeCSV(b, rows)
}

// PoliciesHeader is the header of policies.csv.
var PoliciesHeader = append(append(append(append([]string{"policy", "slo", "footprint_bytes", "tuned_found"},
	numCols("tuned_")...), append([]string{"single_params", "single_train_breaking_jobs"}, numCols("single_")...)...),
	numCols("opp_")...), "headroom_tuned", "headroom_single")

func (f *Fleet) writePolicies(b *bytes.Buffer) {
	header := PoliciesHeader
	if f.Tier != nil {
		header = append(header[:len(header):len(header)], TierPoliciesColumns...)
	}
	rows := [][]string{header}
	for _, p := range f.Policies {
		row := []string{p.Policy, f.SLO, fi(f.FootprintBytes), fi(p.TunedFound)}
		row = append(row, p.Tuned.cols(true)...)
		row = append(row, p.SingleParams, fi(p.SingleTrainBreaking))
		row = append(row, p.Single.cols(true)...)
		row = append(row, p.OPP.cols(true)...)
		row = append(row, ff(p.HeadroomTuned), ff(p.HeadroomSingle))
		if t := p.Tier; t != nil {
			row = append(row, ff(t.TunedNetAvgSavedBytes), ff(t.SingleNetAvgSavedBytes), ff(t.OPPNetAvgSavedBytes))
		}
		rows = append(rows, row)
	}
	writeCSV(b, rows)
}

// JobsHeader is the header of jobs.csv: one row per job and policy (one per
// job without an SLO, or when the job failed).
var JobsHeader = []string{"job", "error", "page_size", "windows", "peak_alive_pages", "footprint_bytes", "alive_page_windows", "access_records",
	"policy", "params", "found", "eval_windows", "savings", "stat", "broken_windows", "breaks", "opp_params", "opp_savings"}

func (f *Fleet) writeJobsCSV(b *bytes.Buffer) {
	rows := [][]string{JobsHeader}
	for _, j := range f.JobResults {
		if j.Error != "" {
			rows = append(rows, append([]string{j.Job, j.Error}, make([]string, len(JobsHeader)-2)...))
			continue
		}
		head := []string{j.Job, "", fi(j.PageSize), strconv.Itoa(j.Windows), fi(j.PeakAlivePages), fi(j.FootprintBytes()), fi(j.AlivePageWindows), fi(j.AccessRecords)}
		if len(j.Tuned) == 0 {
			rows = append(rows, append(head, make([]string, len(JobsHeader)-len(head))...))
			continue
		}
		oppParams, oppSavings := "", ""
		if j.OPP != nil {
			oppParams, oppSavings = j.OPP.Params, ff(j.OPP.Eval.Savings)
		}
		for _, c := range j.Tuned {
			row := append(head[:len(head):len(head)], c.Policy, c.Params, strconv.FormatBool(c.Found), strconv.Itoa(j.Eval.Len()))
			if c.Found {
				row = append(row, ff(c.Eval.Savings), ff(c.Eval.Stat), strconv.Itoa(c.Eval.BrokenWindows), strconv.FormatBool(!c.Eval.MeetsSLO))
			} else {
				row = append(row, "0", "", "", "false")
			}
			rows = append(rows, append(row, oppParams, oppSavings))
		}
	}
	writeCSV(b, rows)
}

// jobJSON is a job in jobs.json: its result without the curve (curves.csv
// has it), plus its footprint.
type jobJSON struct {
	JobResult
	FootprintBytes int64 `json:"footprint_bytes"`
}

func (f *Fleet) writeJobsJSON(b *bytes.Buffer) {
	out := []jobJSON{}
	for _, j := range f.JobResults {
		j.Curve = nil
		out = append(out, jobJSON{j, j.FootprintBytes()})
	}
	writeJSON(b, out)
}

// CurvesHeader is the header of curves.csv: the job, then SPEC section 6.
var CurvesHeader = append([]string{"job"}, result.CSVHeader...)

func (f *Fleet) writeCurves(b *bytes.Buffer) {
	rows := [][]string{CurvesHeader}
	for _, j := range f.JobResults {
		for _, pt := range j.Curve {
			r := result.Result{Saved: pt.Saved, Alive: j.AlivePageWindows, PageSize: j.PageSize, Accessed: make([]int64, j.Windows)}
			rows = append(rows, []string{j.Job, pt.Policy, pt.Params, ff(pt.MaxPR), ff(pt.P99PR), ff(pt.P98PR), ff(pt.MeanPR),
				fi(pt.Promotions), fi(pt.Saved), fi(j.AlivePageWindows), ff(r.Savings()), ff(r.AvgSavedBytes())})
		}
	}
	writeCSV(b, rows)
}

// WriteSummary prints a short text summary.
func (f *Fleet) WriteSummary(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d jobs, %d failed; footprint %s (peak alive), %d access records\n", f.Jobs, f.Failed, bytesStr(float64(f.FootprintBytes)), f.AccessRecords)
	sampled := 0
	for _, j := range f.JobResults {
		if j.SampleRate > 0 {
			sampled++
		}
	}
	if sampled > 0 {
		fmt.Fprintf(&b, "%d jobs ran on a sample of their pages: their counts are estimates (the sample's x 1/rate); the jobs' curves (curves.csv) have no error bounds (mdk mpc --sample prints a job's), the fleet sums' bounds of the average saved bytes are in settings.csv (*_err) and fleet.json (err), but for OPP's; the savings and OPP's average saved bytes have none, their bounds did not cover the exact values often enough (docs/bench.md, \"The fleet's own coverage\")\n", sampled)
	}
	for _, j := range f.JobResults {
		if j.SmallSample != "" {
			fmt.Fprintf(&b, "WARNING: %s: %s\n", j.Job, j.SmallSample)
		}
	}
	for _, j := range f.JobResults {
		if j.Error != "" {
			fmt.Fprintf(&b, "  failed: %s\n", j.Error)
		}
	}
	if f.SLO == "" {
		best := -1
		for i, s := range f.Settings {
			if !s.Controller && (best < 0 || s.Savings > f.Settings[best].Savings) {
				best = i
			}
		}
		if best >= 0 {
			s := f.Settings[best]
			if s.Err == nil || s.Err.AvgSavedBytes == nil {
				fmt.Fprintf(&b, "most savings: %s:%s frees %s on average (%.2f%% of the footprint)\n", s.Policy, s.Params, bytesStr(s.AvgSavedBytes), 100*s.Savings)
			} else {
				fmt.Fprintf(&b, "most savings: %s:%s frees %s ±%s on average (%.2f%% of the footprint)\n", s.Policy, s.Params,
					bytesStr(s.AvgSavedBytes), bytesStr(*s.Err.AvgSavedBytes), 100*s.Savings)
			}
			f.writeTierLine(&b, s)
		}
		f.writeControllers(&b)
		_, err := w.Write(b.Bytes())
		return err
	}
	fmt.Fprintf(&b, "at %s, on each job's evaluation windows (fleet savings = avg saved bytes / footprint):\n", f.SLO)
	fmt.Fprintf(&b, "  %-6s %-26s %-36s %s\n", "policy", "tuned per job", "one setting for all", "OPP per job")
	for _, p := range f.Policies {
		tuned := fmt.Sprintf("%6.2f%%, %s", 100*p.Tuned.Savings, breaking(p.Tuned))
		switch {
		case p.Tuned.Jobs > 0 && p.TunedFound == 0:
			tuned = "none meets the SLO"
		case p.TunedFound < p.Tuned.Jobs:
			tuned += fmt.Sprintf(", %d none", p.Tuned.Jobs-p.TunedFound)
		}
		single := "no jobs"
		if p.SingleParams != "" {
			single = fmt.Sprintf("%6.2f%%, %s (%s)", 100*p.Single.Savings, breaking(p.Single), p.SingleParams)
			if e := p.Single.Err; e != nil && e.Savings != nil {
				single = fmt.Sprintf("%6.2f%% ±%.2f, %s (%s)", 100*p.Single.Savings, 100**e.Savings, breaking(p.Single), p.SingleParams)
			}
		}
		fmt.Fprintf(&b, "  %-6s %-26s %-36s %6.2f%%\n", p.Policy, tuned, single, 100*p.OPP.Savings)
	}
	if f.Tier != nil {
		fmt.Fprintf(&b, "net of the %s tier's own memory, the same (GiB freed):\n", f.Tier.Name)
		for _, p := range f.Policies {
			fmt.Fprintf(&b, "  %-6s %-26s %-36s %s\n", p.Policy, gib(p.Tier.TunedNetAvgSavedBytes), gib(p.Tier.SingleNetAvgSavedBytes), gib(p.Tier.OPPNetAvgSavedBytes))
		}
	}
	f.writeControllers(&b)
	_, err := w.Write(b.Bytes())
	return err
}

// writeControllers prints each controller's fleet line: every job running
// it, what the fleet frees on the whole traces and, with an SLO, on the
// evaluation windows with the jobs that break it there.
func (f *Fleet) writeControllers(b *bytes.Buffer) {
	for _, s := range f.Settings {
		if !s.Controller {
			continue
		}
		fmt.Fprintf(b, "controller %s:%s on every job: frees %s on average (%.2f%% of the footprint), %d switches",
			s.Policy, s.Params, bytesStr(s.AvgSavedBytes), 100*s.Savings, s.Switches)
		if s.Eval != nil {
			fmt.Fprintf(b, "; on the evaluation windows %.2f%%, %s", 100*s.Eval.Savings, breaking(*s.Eval))
		}
		b.WriteString("\n")
		f.writeTierLine(b, s)
	}
}

// breaking says how many jobs break the SLO: "0 breaking", "BREAKS 3 of 5
// jobs", "BREAKS ALL 5 jobs", so a row that breaks it does not read as a
// result to compare.
func breaking(n Numbers) string {
	switch {
	case n.BreakingJobs == 0:
		return "0 breaking"
	case n.BreakingJobs == n.Jobs:
		return fmt.Sprintf("BREAKS ALL %d jobs", n.Jobs)
	}
	return fmt.Sprintf("BREAKS %d of %d jobs", n.BreakingJobs, n.Jobs)
}

// writeTierLine prints setting s's net GiB freed and slowdown on the tier.
func (f *Fleet) writeTierLine(b *bytes.Buffer, s SettingRow) {
	if s.Tier == nil {
		return
	}
	fmt.Fprintf(b, "on the %s tier: %s frees %s net (%s kept by the tier); mean job slowdown %s, worst job %s (%s)\n",
		f.Tier.Name, s.Policy+":"+s.Params, gib(s.Tier.NetAvgSavedBytes), gib(s.Tier.TierBytes),
		pct(s.Tier.MeanSlowdown), pct(s.Tier.MaxJobSlowdown), s.Tier.MaxJob)
}

func gib(x float64) string { return strconv.FormatFloat(x/(1<<30), 'f', 3, 64) + " GiB" }
func pct(x float64) string { return strconv.FormatFloat(100*x, 'g', 4, 64) + "%" }

func bytesStr(x float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for x >= 1024 && i < len(units)-1 {
		x /= 1024
		i++
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + " " + units[i]
}
