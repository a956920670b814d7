package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"mdk/gbdt"
	"mdk/internal/outfile"
	"mdk/mpc"
	"mdk/policy"
	"mdk/result"
	"mdk/trace"
)

// openTrace opens a trace file in any known format; "-" is standard input.
func (e *env) openTrace(path string) (trace.Reader, io.Closer, error) {
	if path == "-" {
		r, err := trace.NewReaderAuto(e.stdin, "stdin")
		return r, io.NopCloser(nil), err
	}
	return trace.Open(path)
}

// writeFile writes the file path with write, through a temporary file
// renamed into place only if write and the file's close succeed: a failed
// command leaves an existing file as it was. Every command that writes a
// file goes through it or through [outfile] directly.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := outfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// parseSpecs parses every --policy spec with the trace's window length
// (policy.ParseSpecs: no spec means every policy's default grid, lopp's
// only with a model). modelPath, if not empty, is L-OPP's model file.
func parseSpecs(specs []string, window time.Duration, modelPath string) ([]policy.Setting, error) {
	return parseSpecsOn(specs, window, modelPath, false)
}

// parseSpecsOn is parseSpecs for an axis: wide (an x axis on a tier
// metric) expands a bare policy name to its wide grid (policy.WideGrid).
func parseSpecsOn(specs []string, window time.Duration, modelPath string, wide bool) ([]policy.Setting, error) {
	m, err := loadModel(modelPath)
	if err != nil {
		return nil, err
	}
	ss, err := policy.ParseSpecs(specs, window, policy.SpecOptions{Model: m, Wide: wide})
	if se := (*policy.SpecError)(nil); errors.As(err, &se) {
		return nil, usagef("--policy %v", err)
	} else if err != nil {
		return nil, usageError{err}
	}
	return ss, nil
}

// loadModel loads L-OPP's model file ("" means none: a nil Scorer, never a
// nil *gbdt.Model in one).
func loadModel(path string) (policy.Scorer, error) {
	if path == "" {
		return nil, nil
	}
	m, err := gbdt.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	return m, nil
}

// terminal is a standard error that says whether it is a terminal: the
// tests give one to see the progress lines.
type terminal interface {
	io.Writer
	IsTerminal() bool
}

// tty returns standard error if it is a terminal, else nil: progress goes
// to a terminal only, never into a log or a pipe.
func (e *env) tty() io.Writer {
	switch f := e.stderr.(type) {
	case *os.File:
		if term.IsTerminal(int(f.Fd())) {
			return f
		}
	case terminal:
		if f.IsTerminal() {
			return f
		}
	}
	return nil
}

// progress returns a progress callback that redraws one line on stderr
// ("what: window 3/40 (7%)"), or nil when stderr is not a terminal.
func (e *env) progress(what string) func(done, total int) {
	return e.progressOf(what, "window")
}

// progressOf is progress counting unit ("round") instead of windows.
func (e *env) progressOf(what, unit string) func(done, total int) {
	f := e.tty()
	if f == nil {
		return nil
	}
	last := time.Time{}
	return func(done, total int) {
		now := time.Now()
		if now.Sub(last) < 200*time.Millisecond && done != total {
			return
		}
		last = now
		if total > 0 {
			fmt.Fprintf(f, "\r%s: %s %d/%d (%d%%)", what, unit, done, total, done*100/total)
			if done == total {
				fmt.Fprint(f, "\r\033[K")
			}
		} else {
			fmt.Fprintf(f, "\r%s: %s %d", what, unit, done)
		}
	}
}

// endProgress clears the progress line.
func (e *env) endProgress() {
	if f := e.tty(); f != nil {
		fmt.Fprint(f, "\r\033[K")
	}
}

// sampleOptions are the --sample flags of the commands that compute curves.
type sampleOptions struct {
	rate   string
	seed   uint64
	groups int
}

func (o *sampleOptions) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&o.rate, "sample", "", "run on a spatial sample of the pages: `RATE` such as 10%, 1% or 0.1% (1/N of 100%), counts scaled by 1/RATE, with error bounds; default: the trace's own (all pages unless it was recorded sampled)")
	fl.Uint64Var(&o.seed, "sample-seed", 1, "`seed` of the sampling hash of (space, page)")
	fl.IntVar(&o.groups, "sample-groups", mpc.DefaultGroups, "disjoint random sub-samples (`K`, 2..64) whose spread gives the error bounds")
}

// parse returns the requested sample (zero for none) and sub-samples.
func (o sampleOptions) parse() (trace.Sample, int, error) {
	if o.groups < 2 || o.groups > trace.MaxSampleGroups {
		return trace.Sample{}, 0, usagef("--sample-groups %d: want 2 .. %d", o.groups, trace.MaxSampleGroups)
	}
	if o.rate == "" {
		return trace.Sample{}, o.groups, nil
	}
	ppm, err := trace.ParseSampleRate(o.rate)
	if err != nil {
		return trace.Sample{}, 0, usagef("--sample: %v", err)
	}
	return trace.Sample{PPM: ppm, Seed: o.seed}, o.groups, nil
}

// sampleWarning is what a sampled run's error output says of its bounds:
// loudly, that a sample without pages or with too few for bounds says
// little, and which metrics are printed without a bound
// (result.PrintedBound).
func sampleWarning(rs []*result.Result) string {
	if len(rs) == 0 || !rs[0].Sampled() {
		return ""
	}
	if w := rs[0].SmallSample(); w != "" {
		return "mdk: WARNING: " + w + "\n"
	}
	nob := 0
	for _, x := range rs {
		for _, m := range result.Metrics {
			if _, ok := x.PrintedBound(m); !ok && len(x.Groups) >= 2 && result.Bounded(x.Policy, m) {
				nob++
			}
		}
	}
	w := "mdk: warning: on a sample, savings, mean_pr, max_pr, p99_pr, p98_pr and OPP's promotions are printed without error bounds: their bounds did not cover the exact values often enough (docs/bench.md, sampling)"
	if nob > 0 {
		w += fmt.Sprintf("; %d other estimates have none either, because every sub-sample gave the same value", nob)
	}
	return w + "\n"
}

// sizeUnits are the binary units of parseSize, as the kernel's memparse:
// K is 1024 bytes.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}}

// parseSize parses a byte count: a plain number of bytes, or a number
// (decimals allowed, if the bytes are whole) with a binary unit K, M, G or
// T, optionally followed by "iB" or "B" ("512K", "100G", "1.5GiB", "64MB"
// are all binary). The error is one line without Go's parser's words.
// --swap-floor and convert --page-size read it.
func parseSize(s string) (int64, error) {
	num, shift := strings.TrimSpace(s), uint(0)
	up := strings.ToUpper(num)
	up = strings.TrimSuffix(strings.TrimSuffix(up, "IB"), "B")
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(up, u.suffix); ok {
			up, shift = strings.TrimSpace(rest), u.shift
			break
		}
	}
	bad := fmt.Errorf("%q: want a size in bytes, or with a unit: 512K, 64M, 100G, 1.5GiB", s)
	if up == "" || strings.TrimLeft(up, "0123456789.") != "" || strings.Count(up, ".") > 1 {
		return 0, bad
	}
	v, err := strconv.ParseFloat(up, 64)
	if err != nil {
		return 0, bad
	}
	v *= float64(uint64(1) << shift)
	if v >= 1<<62 {
		return 0, fmt.Errorf("%q: more than 4 EiB", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("%q: not a whole number of bytes", s)
	}
	return int64(v), nil
}

// formatSize prints n bytes in the largest binary unit that divides it
// ("64M"), as parseSize reads it back.
func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// MinLiveWindow is the shortest window of the commands that act on live
// processes (record, agent): a window must leave time to scan the pages.
const MinLiveWindow = 10 * time.Millisecond

// checkLiveWindow refuses a --window that is not a window a live process
// can be scanned in.
func checkLiveWindow(w time.Duration) error {
	if w <= 0 {
		return usagef("--window must be positive, got %v", w)
	}
	if w < MinLiveWindow {
		return usagef("--window %v: shorter than %v, too short to scan a process's pages in", w, MinLiveWindow)
	}
	return nil
}

// refuseZero refuses a 0 given on the command line to a flag whose 0 is
// not a value but the flag's absence (a default, or "none"): taken
// silently, --window 0 would mean 30s. A flag whose help gives 0 a meaning
// ("0: off") is not passed here.
func refuseZero(fl *pflag.FlagSet, names ...string) error {
	for _, name := range names {
		f := fl.Lookup(name)
		if f == nil || !fl.Changed(name) {
			continue
		}
		if v := f.Value.String(); v == "0" || v == "0s" {
			return usagef("--%s 0: not a value here (leave --%s out for its default)", name, name)
		}
	}
	return nil
}
