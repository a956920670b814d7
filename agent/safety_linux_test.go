//go:build linux

package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	itest "mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

// hookLog calls fn with the number of windows logged so far after each one.
type hookLog struct {
	n  int
	fn func(n int)
}

func (h *hookLog) Write(b []byte) (int, error) {
	h.n += bytes.Count(b, []byte("\n"))
	h.fn(h.n)
	return len(b), nil
}

func readRows(t testing.TB, dir string) []Row {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, MeasuredFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ReadMeasured(f, MeasuredFile)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestSafetyLimits runs the replay under each safety limit, in 100 ms
// windows, and checks what each one kept, and that the side-by-side
// explains every difference by the limit (residual 0).
func TestSafetyLimits(t *testing.T) {
	itest.SetupZram(t, 128<<20)
	const window = 100 * time.Millisecond
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	ss, err := policy.Parse("age:A=1", window)
	if err != nil {
		t.Fatal(err)
	}
	psiFile := filepath.Join(dir, "pressure")
	os.WriteFile(psiFile, []byte("some avg10=42.50 avg60=1.00 avg300=0.00 total=9\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), 0o644)
	for _, tc := range []struct {
		name  string
		set   func(*Options)
		check func(t *testing.T, r Row)
	}{
		{"dry-run", func(o *Options) { o.DryRun = true }, func(t *testing.T, r Row) {
			if r.Reclaimed != 0 || r.SkippedDry != r.Decided || r.Promotions != 0 || r.Saved != 0 {
				t.Errorf("window %d: dry run reclaimed %d, skipped %d of %d decided; %d promotions, %d saved", r.Window, r.Reclaimed, r.SkippedDry, r.Decided, r.Promotions, r.Saved)
			}
		}},
		{"limit", func(o *Options) { o.MaxPages = 50 }, func(t *testing.T, r Row) {
			if r.Reclaimed > 50 || r.SkippedLimit != max(0, r.Decided-50) {
				t.Errorf("window %d: limit 50: reclaimed %d, skipped %d of %d decided", r.Window, r.Reclaimed, r.SkippedLimit, r.Decided)
			}
		}},
		{"swap-floor", func(o *Options) { o.SwapFloorBytes = 1 << 60 }, func(t *testing.T, r Row) {
			if r.Reclaimed != 0 || r.SkippedSwap != r.Decided {
				t.Errorf("window %d: floor above the swap: reclaimed %d, skipped %d of %d", r.Window, r.Reclaimed, r.SkippedSwap, r.Decided)
			}
		}},
		{"psi", func(o *Options) { o.PSIThreshold, o.PSIPath = 10, psiFile }, func(t *testing.T, r Row) {
			if r.PSISome != 42.5 || r.Reclaimed != 0 || r.SkippedPSI != r.Decided {
				t.Errorf("window %d: PSI %v over 10: reclaimed %d, skipped %d of %d", r.Window, r.PSISome, r.Reclaimed, r.SkippedPSI, r.Decided)
			}
		}},
		{"slo", func(o *Options) { o.SLO, o.SLOWindows = 0.01, 1 }, func(t *testing.T, r Row) {
			broken := r.Accessed > 0 && float64(r.Promotions)/float64(r.Accessed) > 0.01
			if broken && (r.Reclaimed != 0 || r.SkippedSLO != r.Decided) || !broken && r.SkippedSLO != 0 {
				t.Errorf("window %d: PR %d/%d against SLO 1%%: reclaimed %d, skipped %d of %d", r.Window, r.Promotions, r.Accessed, r.Reclaimed, r.SkippedSLO, r.Decided)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := filepath.Join(dir, tc.name)
			opt := DefaultOptions
			opt.Setting, opt.Window, opt.Dir, opt.PSIThreshold = ss[0], window, run, 0
			tc.set(&opt)
			if _, err := Run(context.Background(), startReplay(t, tr, path, 0), opt); err != nil {
				t.Fatal(err)
			}
			var decided int64
			for _, r := range readRows(t, run) {
				tc.check(t, r)
				decided += r.Decided
			}
			if decided == 0 {
				t.Fatal("nothing decided: the test checks nothing")
			}
			c, err := Compare(run, ss[0])
			if err != nil {
				t.Fatal(err)
			}
			if c.Total.ResidualPromotions != 0 || c.Total.ResidualSaved != 0 || c.Total.Decided != c.Total.PredDecided {
				t.Errorf("unexplained: %+v", c.Total)
			}
			if tc.name != "slo" && tc.name != "limit" && (c.Total.Promotions != 0 || c.Total.Saved != 0) {
				t.Errorf("nothing reclaimed, yet %d promotions and %d saved measured", c.Total.Promotions, c.Total.Saved)
			}
		})
	}
}

// TestEndsCleanly checks the two clean ends: the context canceled (SIGINT,
// SIGTERM) after three windows, and the target exiting after three windows;
// both leave every completed window in the run directory. It also checks
// the Prometheus metrics against the measured rows.
func TestEndsCleanly(t *testing.T) {
	itest.SetupZram(t, 128<<20)
	const window = 100 * time.Millisecond
	dir := t.TempDir()
	tr, path := genTrace(t, dir, window)
	ss, _ := policy.Parse("age:A=1", window)
	for _, how := range []string{"cancel", "exit"} {
		t.Run(how, func(t *testing.T) {
			run := filepath.Join(dir, how)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rep := startReplay(t, tr, path, 0)
			opt := DefaultOptions
			opt.Setting, opt.Window, opt.Dir, opt.PSIThreshold = ss[0], window, run, 0
			opt.Metrics = NewMetrics(policy.String(ss[0]))
			reg := prometheus.NewRegistry()
			if err := opt.Metrics.Register(reg); err != nil {
				t.Fatal(err)
			}
			opt.Log = &hookLog{fn: func(n int) {
				if n != 3 {
					return
				}
				if how == "cancel" {
					cancel()
				} else {
					// The test, not the agent, ends the workload.
					syscall.Kill(rep.Targets()[0], syscall.SIGKILL)
				}
			}}
			sum, err := Run(ctx, rep, opt)
			if err != nil {
				t.Fatal(err)
			}
			rows := readRows(t, run)
			if sum.Windows != 3 || len(rows) != 3 {
				t.Fatalf("%d windows run, %d written; want 3", sum.Windows, len(rows))
			}
			rd, c, err := trace.Open(filepath.Join(run, TraceFile))
			if err != nil {
				t.Fatal(err)
			}
			obs, err := trace.ReadAll(rd)
			c.Close()
			if err != nil || len(obs.Windows) != 3 {
				t.Fatalf("observed trace: %v windows, %v", len(obs.Windows), err)
			}
			if _, err := ReadRunInfo(run); err != nil {
				t.Fatal(err)
			}
			var prom, out int64
			for _, r := range rows {
				prom += r.Promotions
				out += r.Out
			}
			if got := testutil.ToFloat64(opt.Metrics.prom); got != float64(prom) {
				t.Errorf("metric promotions_total %v, measured %d", got, prom)
			}
			if got := testutil.ToFloat64(opt.Metrics.pages.WithLabelValues("out")); got != float64(out) || out == 0 {
				t.Errorf("metric pages_total{what=out} %v, measured %d", got, out)
			}
			if n, err := testutil.GatherAndCount(reg); err != nil || n < 10 {
				t.Errorf("registry: %d metrics, %v", n, err)
			}
			leftovers, _ := filepath.Glob(filepath.Join(run, ".*tmp*"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
		})
	}
}
