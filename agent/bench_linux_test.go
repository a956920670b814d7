//go:build linux

package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mdk/gen"
	"mdk/internal/testutil"
	"mdk/policy"
	"mdk/trace"
)

// BenchmarkAgentWindow measures the agent's own cost per window (its CPU:
// the pagemap scan of every alive page, the decisions, process_madvise and
// the confirmation, and the kernel's work of MADV_PAGEOUT done in the
// agent's context: compressing the pages into zram) on a replay workload of
// the gen default model, on zram swap, and reports it per million pages of
// the targets (alive pages: mapped, resident or out). The dry run is the
// scan and the decisions alone. Each iteration
// replays the whole trace with 1 ms windows; the workload's touches are
// not the agent's cost and are not counted.
func BenchmarkAgentWindow(b *testing.B) {
	testutil.SetupZram(b, 2<<30)
	for _, bc := range []struct {
		pages int
		spec  string
		dry   bool
	}{{65_536, "age:A=2", false}, {262_144, "age:A=2", false}, {262_144, "paw:P=2,wait=1", false}, {262_144, "age:A=2", true},
		// A capacity ranks all the targets' pages every window (docs/bench.md).
		{262_144, "lru:C=50%", false}, {262_144, "lru:C=50%", true}} {
		pages, spec := bc.pages, bc.spec
		name := fmt.Sprintf("pages=%d/%s", pages, spec)
		if bc.dry {
			name += "/dry-run"
		}
		{
			b.Run(name, func(b *testing.B) {
				dir := b.TempDir()
				cfg := gen.DefaultConfig
				cfg.Pages, cfg.Windows, cfg.Window = pages, 16, time.Millisecond
				path := filepath.Join(dir, "w.mdkt")
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				bin, _ := trace.FormatByName("binary")
				w, err := bin.NewWriter(f, cfg.Header())
				if err == nil {
					err = gen.Generate(cfg, w)
				}
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				tr, err := readTrace(path)
				if err != nil {
					b.Fatal(err)
				}
				ss, _ := policy.Parse(spec, cfg.Window)
				var cpu, alive, windows, syscalls, out int64
				for b.Loop() {
					run := filepath.Join(dir, "run")
					opt := DefaultOptions
					opt.Setting, opt.Window, opt.Dir, opt.PSIThreshold, opt.DryRun = ss[0], cfg.Window, run, 0, bc.dry
					opt.Force = true // the previous iteration's run
					if _, err := Run(context.Background(), startReplay(b, tr, path, 0), opt); err != nil {
						b.Fatal(err)
					}
					for _, r := range readRows(b, run) {
						cpu += r.CPUNS
						alive += r.Alive
						windows++
						syscalls += r.Syscalls
						out += r.Out
					}
				}
				b.ReportMetric(float64(cpu)/float64(windows)/1e6, "cpu-ms/window")
				// ns per page-window = ms per window per million pages.
				b.ReportMetric(float64(cpu)/float64(alive), "cpu-ms/window/Mpages")
				b.ReportMetric(float64(alive)/float64(windows), "pages/window")
				b.ReportMetric(float64(out)/float64(windows), "pages-out/window")
				b.ReportMetric(float64(syscalls)/float64(windows), "syscalls/window")
			})
		}
	}
}
