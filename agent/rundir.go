package agent

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"mdk/internal/outfile"
	"mdk/linux"
	"mdk/trace"
)

// This file reads a run directory back and validates each of its files
// against the others (docs/agent.md, "Reading a run back"), and prepares a
// directory for a new run.

// runFileNames are the files that make a directory a run.
var runFileNames = []string{TraceFile, MeasuredFile, SkippedFile, MetaFile}

// CheckRunDir checks, changing nothing, that a new run can be written to
// dir: an existing directory, or a missing one whose parent is a directory
// (the agent creates the run directory, never its parents), writable; and
// not already holding a run (any of trace.mdkt, measured.csv, skipped.csv,
// run.json) unless force, when the run's files are replaced at the end of
// the new run. Other files in dir are left alone.
func CheckRunDir(dir string, force bool) error {
	if dir == "" {
		return errors.New("agent: no run directory")
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		parent := filepath.Dir(filepath.Clean(dir))
		if pi, err := os.Stat(parent); err != nil || !pi.IsDir() {
			return fmt.Errorf("run directory %s: its parent %s is not a directory (the agent creates the run directory, not its parents)", dir, parent)
		}
		return outfile.Check(filepath.Clean(dir))
	case err != nil:
		return fmt.Errorf("run directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("run directory %s is a file, not a directory", dir)
	}
	if !force {
		for _, name := range runFileNames {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return fmt.Errorf("run directory %s already holds a run (%s): give another -o, or --force to replace it", dir, name)
			}
		}
	}
	return outfile.Check(filepath.Join(dir, MetaFile))
}

// makeRunDir checks dir with [CheckRunDir] and creates it if missing.
func makeRunDir(dir string, force bool) error {
	if err := CheckRunDir(dir, force); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	return nil
}

// ReadRunInfo reads dir/run.json and checks it: a setting, a positive
// window, a known tracker, positive target pids, a page limit not negative.
// It reads the snake_case keys of today's run.json and the CamelCase totals
// of older ones.
func ReadRunInfo(dir string) (RunInfo, error) {
	var ri RunInfo
	path := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return ri, err
	}
	if err := json.Unmarshal(b, &ri); err != nil {
		return ri, fmt.Errorf("%s: %w", path, jsonError(b, err))
	}
	if ri.Setting == "" {
		return ri, fmt.Errorf("%s: no \"setting\"", path)
	}
	if _, err := ri.window(); err != nil {
		return ri, fmt.Errorf("%s: %w", path, err)
	}
	switch ri.Tracker {
	case "replay", "live", "damon":
	default:
		return ri, fmt.Errorf("%s: tracker %q: want replay, live or damon", path, ri.Tracker)
	}
	for _, p := range ri.Targets {
		if p <= 0 {
			return ri, fmt.Errorf("%s: target pid %d: want a positive pid", path, p)
		}
	}
	if ri.MaxPages < 0 {
		return ri, fmt.Errorf("%s: max_pages %d: want 0 or more", path, ri.MaxPages)
	}
	return ri, nil
}

// jsonError adds the line to a JSON syntax or type error.
func jsonError(b []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(b)) {
		return err
	}
	return fmt.Errorf("line %d: %w", 1+strings.Count(string(b[:off]), "\n"), err)
}

// window returns run.json's window length.
func (ri RunInfo) window() (time.Duration, error) {
	w, err := time.ParseDuration(ri.Window)
	if err != nil || w <= 0 {
		return 0, fmt.Errorf("window %q: want a positive duration such as 30s", ri.Window)
	}
	return w, nil
}

// WindowLength returns run.json's window length (checked by [ReadRunInfo]).
func (ri RunInfo) WindowLength() time.Duration {
	w, _ := ri.window()
	return w
}

// summaryKeys are Summary's snake_case keys and the CamelCase keys of the
// run.json files written before them.
var summaryKeys = []struct{ snake, camel string }{
	{"windows", "Windows"}, {"decided", "Decided"}, {"out", "Out"}, {"refused", "Refused"},
	{"skipped", "Skipped"}, {"promotions", "Promotions"}, {"saved", "Saved"},
	{"kernel_out", "KernelOut"}, {"cpu_ns", "CPU"},
}

// fields returns the totals in the order of summaryKeys; the first is
// Windows, an int.
func (s *Summary) fields() []*int64 {
	return []*int64{nil, &s.Decided, &s.Out, &s.Refused, &s.Skipped, &s.Promotions, &s.Saved, &s.KernelOut, (*int64)(&s.CPU)}
}

// MarshalJSON writes the totals with snake_case keys, as every other file
// of a run.
func (s Summary) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range s.fields() {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, summaryKeys[i].snake)
		b = append(b, ':')
		if f == nil {
			b = strconv.AppendInt(b, int64(s.Windows), 10)
		} else {
			b = strconv.AppendInt(b, *f, 10)
		}
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads the totals under their snake_case keys or, from older
// run.json files, their CamelCase ones; every total must be there and not
// negative.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	var windows int64
	for i, f := range s.fields() {
		if f == nil {
			f = &windows
		}
		k := summaryKeys[i]
		raw, ok := m[k.snake]
		if !ok {
			raw, ok = m[k.camel]
		}
		if !ok {
			return fmt.Errorf("summary: no %q", k.snake)
		}
		if err := json.Unmarshal(raw, f); err != nil {
			return fmt.Errorf("summary: %s: %w", k.snake, err)
		}
		if *f < 0 {
			return fmt.Errorf("summary: %s %d: want 0 or more", k.snake, *f)
		}
	}
	s.Windows = int(windows)
	return nil
}

// RunDir is a run directory read back and validated.
type RunDir struct {
	Dir   string
	Info  RunInfo
	Trace *trace.Trace
	Rows  []Row
	skips []skipLine // skipped.csv's lines
}

// skipLine is one line of skipped.csv: a page decided at the end of window
// and not reclaimed, with the cause (or swapped_in: see [CauseBack]).
type skipLine struct {
	window int
	page   uint32
	cause  string
}

// requiredCols are the measured.csv columns every run must have: the
// measurement itself. A run may lack the others (a hand-made or partial
// run); the checks that need them are then not made.
var requiredCols = []string{"window", "promotions", "saved"}

// ReadRun reads the run directory dir and validates every file against the
// others: run.json's window is the trace's, measured.csv has one row per
// window of the trace with its promotions and saved page-windows, every
// count is possible (promotions at most the window's accessed pages, saved
// page-windows and promotions at most its pages alive), decided = skipped +
// reclaimed and refused = the sum of its reasons where those columns are
// there, skipped.csv's causes are known and its lines per window and cause
// are the counts of measured.csv, and run.json's totals are the sums of
// measured.csv's. An error names the file and, where there is one, the line.
func ReadRun(dir string) (*RunDir, error) {
	info, err := ReadRunInfo(dir)
	if err != nil {
		return nil, err
	}
	metaPath := filepath.Join(dir, MetaFile)
	tpath := filepath.Join(dir, TraceFile)
	rd, c, err := trace.Open(tpath)
	if err != nil {
		return nil, err
	}
	t, err := trace.ReadAll(rd)
	c.Close()
	if err != nil {
		return nil, err
	}
	if w := info.WindowLength(); t.Header.Window != w {
		return nil, fmt.Errorf("%s: window %s, but %s has windows of %v: not the same run", metaPath, info.Window, tpath, t.Header.Window)
	}
	mpath := filepath.Join(dir, MeasuredFile)
	mf, err := os.Open(mpath)
	if err != nil {
		return nil, err
	}
	rows, have, err := readMeasured(mf, mpath)
	mf.Close()
	if err != nil {
		return nil, err
	}
	for _, name := range requiredCols {
		if !have[name] {
			return nil, fmt.Errorf("%s:1: no %q column", mpath, name)
		}
	}
	W := len(t.Windows)
	if len(rows) != W {
		return nil, fmt.Errorf("%s has %d windows, %s has %d: not the same run", mpath, len(rows), tpath, W)
	}
	if err := checkRows(mpath, rows, have, t, info); err != nil {
		return nil, err
	}
	spath := filepath.Join(dir, SkippedFile)
	skips, err := readSkipped(spath, W, len(t.Pages))
	if err != nil {
		return nil, err
	}
	if err := checkSkips(spath, mpath, skips, rows, have); err != nil {
		return nil, err
	}
	if s := info.Summary; s != nil {
		if err := checkSummary(metaPath, mpath, *s, rows, have, skips); err != nil {
			return nil, err
		}
	}
	return &RunDir{Dir: dir, Info: info, Trace: t, Rows: rows, skips: skips}, nil
}

// checkRows checks each row of measured.csv (at line w+2) against the trace
// and against itself.
func checkRows(mpath string, rows []Row, have map[string]bool, t *trace.Trace, info RunInfo) error {
	all := func(names ...string) bool {
		for _, n := range names {
			if !have[n] {
				return false
			}
		}
		return true
	}
	refusedCols := []string{"refused"}
	for k := range linux.NumRefusals {
		refusedCols = append(refusedCols, "refused_"+k.String())
	}
	alive := make([]bool, len(t.Pages))
	nAlive := int64(0) // pages alive in window w (SPEC section 1)
	for w := range rows {
		r := &rows[w]
		line := w + 2
		win := &t.Windows[w]
		for _, ids := range [][]uint32{win.Accessed, win.Born} {
			for _, id := range ids {
				if !alive[id] {
					alive[id] = true
					nAlive++
				}
			}
		}
		acc := int64(len(win.Accessed))
		if have["accessed"] && r.Accessed != acc {
			return fmt.Errorf("%s:%d: accessed %d, but window %d of the trace has %d accessed pages", mpath, line, r.Accessed, w, acc)
		}
		if r.Promotions > acc {
			return fmt.Errorf("%s:%d: promotions %d, more than the %d pages accessed in window %d of the trace", mpath, line, r.Promotions, acc, w)
		}
		if r.Promotions+r.Saved > nAlive {
			return fmt.Errorf("%s:%d: promotions %d + saved %d, more than the %d pages alive in window %d of the trace", mpath, line, r.Promotions, r.Saved, nAlive, w)
		}
		if all("decided", "skipped_dry", "skipped_slo", "skipped_psi", "skipped_limit", "skipped_swap", "skipped_gone", "reclaimed") {
			sk := r.SkippedDry + r.SkippedSLO + r.SkippedPSI + r.SkippedLimit + r.SkippedSwap + r.SkippedGone
			if r.Decided != sk+r.Reclaimed {
				return fmt.Errorf("%s:%d: decided %d, but skipped %d + reclaimed %d = %d", mpath, line, r.Decided, sk, r.Reclaimed, sk+r.Reclaimed)
			}
		}
		if all(refusedCols...) {
			n := int64(0)
			for _, v := range r.RefusedBy {
				n += v
			}
			if n != r.Refused {
				return fmt.Errorf("%s:%d: refused %d, but its reasons add up to %d", mpath, line, r.Refused, n)
			}
		}
		if all("reclaimed", "out", "refused") && r.Out+r.Refused > r.Reclaimed {
			return fmt.Errorf("%s:%d: out %d + refused %d, more than the %d pages reclaimed", mpath, line, r.Out, r.Refused, r.Reclaimed)
		}
		if info.DryRun && (r.Reclaimed > 0 || r.Out > 0) {
			return fmt.Errorf("%s:%d: %d pages reclaimed in a dry run (run.json says dry_run)", mpath, line, r.Reclaimed)
		}
		for _, id := range win.Freed { // a free applies after the window
			if alive[id] {
				alive[id] = false
				nAlive--
			}
		}
	}
	return nil
}

// checkSkips checks skipped.csv's lines per window and cause against the
// counts of measured.csv (where its columns are there).
func checkSkips(spath, mpath string, skips []skipLine, rows []Row, have map[string]bool) error {
	W := len(rows)
	counts := map[string][]int64{}
	for _, sk := range skips {
		n := counts[sk.cause]
		if n == nil {
			n = make([]int64, W)
			counts[sk.cause] = n
		}
		n[sk.window]++
	}
	get := func(cause string, w int) int64 {
		if n := counts[cause]; n != nil {
			return n[w]
		}
		return 0
	}
	type check struct {
		cause, col string
		val        func(r *Row) int64
	}
	checks := []check{
		{CauseDry, "skipped_dry", func(r *Row) int64 { return r.SkippedDry }},
		{CauseSLO, "skipped_slo", func(r *Row) int64 { return r.SkippedSLO }},
		{CausePSI, "skipped_psi", func(r *Row) int64 { return r.SkippedPSI }},
		{CauseLimit, "skipped_limit", func(r *Row) int64 { return r.SkippedLimit }},
		{CauseSwap, "skipped_swap", func(r *Row) int64 { return r.SkippedSwap }},
		{CauseGone, "skipped_gone", func(r *Row) int64 { return r.SkippedGone }},
	}
	for k := range linux.NumRefusals {
		checks = append(checks, check{"refused:" + k.String(), "refused_" + k.String(), func(r *Row) int64 { return r.RefusedBy[k] }})
	}
	for _, c := range checks {
		if !have[c.col] {
			continue
		}
		for w := range rows {
			if got, want := get(c.cause, w), c.val(&rows[w]); got != want {
				return fmt.Errorf("%s: window %d has %d lines of cause %s, but %s:%d says %s %d", spath, w, got, c.cause, mpath, w+2, c.col, want)
			}
		}
	}
	// A swapped_in line has the window before the page was found present.
	if have["swapin_other"] {
		for w := range rows {
			want := int64(0)
			if w+1 < W {
				want = rows[w+1].SwapInOther
			}
			if got := get(CauseBack, w); got != want {
				return fmt.Errorf("%s: window %d has %d lines of cause %s, but %s:%d says swapin_other %d", spath, w, got, CauseBack, mpath, w+3, want)
			}
		}
		if W > 0 && rows[0].SwapInOther != 0 {
			return fmt.Errorf("%s:2: swapin_other %d in the first window, before any page was put out", mpath, rows[0].SwapInOther)
		}
	}
	return nil
}

// checkSummary checks run.json's totals against measured.csv and
// skipped.csv.
func checkSummary(metaPath, mpath string, s Summary, rows []Row, have map[string]bool, skips []skipLine) error {
	var sum Summary
	sum.Windows = len(rows)
	for i := range rows {
		r := &rows[i]
		sum.Decided += r.Decided
		sum.Out += r.Out
		sum.Refused += r.Refused
		sum.Promotions += r.Promotions
		sum.Saved += r.Saved
		sum.KernelOut += r.KernelOut
	}
	for _, sk := range skips {
		if sk.cause != CauseBack {
			sum.Skipped++
		}
	}
	for _, c := range []struct {
		name     string
		got, sum int64
		src      string
	}{
		{"windows", int64(s.Windows), int64(sum.Windows), mpath},
		{"decided", s.Decided, sum.Decided, "decided"},
		{"out", s.Out, sum.Out, "out"},
		{"refused", s.Refused, sum.Refused, "refused"},
		{"promotions", s.Promotions, sum.Promotions, "promotions"},
		{"saved", s.Saved, sum.Saved, "saved"},
		{"kernel_out", s.KernelOut, sum.KernelOut, "kernel_out"},
	} {
		if c.src != mpath && !have[c.src] {
			continue
		}
		if c.got != c.sum {
			return fmt.Errorf("%s: summary %s %d, but %s adds up to %d", metaPath, c.name, c.got, mpath, c.sum)
		}
	}
	return nil
}

// readSkipped reads skipped.csv: the header window,page,cause, then lines
// of a window below windows, a page below pages and a known cause.
func readSkipped(path string, windows, pages int) ([]skipLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = 3
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty file, expected the header window,page,cause", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !slices.Equal(head, []string{"window", "page", "cause"}) {
		return nil, fmt.Errorf("%s:1: header %q, expected window,page,cause", path, strings.Join(head, ","))
	}
	var out []skipLine
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		w, err1 := strconv.Atoi(rec[0])
		p, err2 := strconv.ParseUint(rec[1], 10, 32)
		if err1 != nil || err2 != nil || w < 0 || w >= windows || int(p) >= pages {
			return nil, fmt.Errorf("%s:%d: expected a window below %d and a page below %d, got %q", path, line, windows, pages, rec[:2])
		}
		if !knownCause(rec[2]) {
			return nil, fmt.Errorf("%s:%d: cause %q: want refused:REASON, %s, %s, %s, %s, %s, %s or %s", path, line, rec[2],
				CauseDry, CauseSLO, CausePSI, CauseLimit, CauseSwap, CauseGone, CauseBack)
		}
		out = append(out, skipLine{w, uint32(p), rec[2]})
	}
}

// knownCause reports whether c is a cause the agent writes.
func knownCause(c string) bool {
	switch c {
	case CauseDry, CauseSLO, CausePSI, CauseLimit, CauseSwap, CauseGone, CauseBack:
		return true
	}
	if r, ok := strings.CutPrefix(c, "refused:"); ok {
		for k := range linux.NumRefusals {
			if k.String() == r {
				return true
			}
		}
	}
	return false
}
