package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"mdk/calibrate"
	"mdk/internal/outfile"
	"mdk/linux"
	"mdk/tier"
)

type calibrateOptions struct {
	tier      string
	out       string
	setup     bool
	dryRun    bool
	pages     int
	contents  []string
	content   string
	pid       int
	pidPages  int
	algorithm string
	dir       string
	seed      uint64
}

func newCalibrateCmd(e *env) *cobra.Command {
	var o calibrateOptions
	cmd := &cobra.Command{
		Use:   "calibrate --tier zram|swapfile|zswap --setup -o tier.json",
		Short: "Measure what a far tier costs on this machine: swap-out, swap-in latency, memory per page",
		Long: `Calibrate measures, for real on this machine, what moving pages to a far
tier costs, and writes a tier file for --tier of mdk mpc, tune, report and
fleet (docs/tiers.md):

  swap-out     CPU time per page of madvise(MADV_PAGEOUT) onto the device
  swap-in      latency of a touch of a reclaimed page (p50, p99, max, mean),
               beside the same touch of a resident page
  memory       the tier's memory per page (zram mm_stat: compressed size and
               total memory used), for synthetic contents of known
               compressibility (zero, third, half, random: that share of
               each page random, the rest zeros) and, with --pid, a sample of
               a live process's own anonymous pages (read through
               /proc/PID/mem, never written)

It creates its own device and removes it afterwards, and only when told to
(--setup): a zram device through /sys/class/zram-control (hot_add, then
hot_remove), or a swap file in --dir, swapped on at the highest priority
(32767), so the pages it reclaims from its own memory go there. It never
touches a swap or zram device it did not create, and refuses to run when
another swap device has that priority or zswap is enabled. Without --setup
it changes nothing; --dry-run prints what it would do. zswap cannot be
measured on a host (turning it on changes every swap device): measure it in
a guest, or use the built-in zswap figures. Needs root and Linux 5.4 or
later.

The tier file's figures are those of --content (default third; with --pid,
the process's sample); every content measured is listed in it.

EXIT STATUS: 0 done, 1 measurement failed (the machine is restored), 2 bad
usage.`,
		Example: `  mdk calibrate --tier zram --dry-run
  sudo mdk calibrate --tier zram --setup -o zram.json
  sudo mdk calibrate --tier zram --setup --pid 1234 -o zram-app.json
  mdk mpc trace.mdkt --tier zram.json --x slowdown --target 0.1%,1%`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return runCalibrate(e, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.tier, "tier", "zram", "tier to measure: `zram`, swapfile or zswap (zswap: not on a host; swapfile: set up, but its swap-ins cannot be timed, docs/tiers.md)")
	fl.StringVarP(&o.out, "output", "o", "", "write the tier file to `FILE` (default: standard output)")
	fl.BoolVar(&o.setup, "setup", false, "create the device (zram device or swap file), swap on it, and remove it afterwards")
	fl.BoolVar(&o.dryRun, "dry-run", false, "print what calibrate would do and change nothing")
	fl.IntVar(&o.pages, "pages", calibrate.DefaultPages, "`pages` measured per content (4 KiB each)")
	fl.StringSliceVar(&o.contents, "contents", nil, "synthetic `contents` to measure (default: "+calibrate.ContentNames()+")")
	fl.StringVar(&o.content, "content", "", "`content` whose figures the tier takes (default: "+calibrate.DefaultContent+", or the --pid sample)")
	fl.IntVar(&o.pid, "pid", 0, "also sample the anonymous pages of process `PID` (read-only)")
	fl.IntVar(&o.pidPages, "pid-pages", calibrate.DefaultPIDPages, "pages to sample from --pid")
	fl.StringVar(&o.algorithm, "algorithm", "", "zram compressor (such as lz4; default: the kernel's)")
	fl.StringVar(&o.dir, "dir", "", "directory of the swap file (--tier swapfile; not tmpfs)")
	fl.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic contents and the touch order")
	return cmd
}

func runCalibrate(e *env, o calibrateOptions) error {
	opts := calibrate.Options{
		Tier: o.tier, Setup: o.setup, Pages: o.pages, Contents: o.contents, Content: o.content,
		PID: o.pid, PIDPages: o.pidPages, Algorithm: o.algorithm, Dir: o.dir, Seed: o.seed,
		Log: func(format string, args ...any) { fmt.Fprintf(e.stderr, format+"\n", args...) },
	}
	if o.pid < 0 {
		return usagef("--pid %d: want a process ID", o.pid)
	}
	// 0 is the package's "default"; given on the command line it would be
	// taken silently for the default.
	if o.pages == 0 {
		return usagef("--pages 0: want %d to %d pages per content", 64, calibrate.MaxPages)
	}
	if o.pidPages == 0 {
		return usagef("--pid-pages 0: want %d to %d pages", 64, calibrate.MaxPIDPages)
	}
	plan, err := calibrate.Plan(opts)
	if err != nil {
		return usageError{err}
	}
	if o.dryRun {
		_, err := fmt.Fprint(e.stdout, plan)
		return err
	}
	if !o.setup {
		return usagef("calibrate changes nothing without --setup; it would:\n%s", plan)
	}
	if o.out != "" {
		if err := outfile.Check(o.out); err != nil {
			return err
		}
	}
	t, err := calibrate.Run(e.ctx, opts)
	if err != nil {
		if errors.Is(err, linux.ErrNotSupported) {
			return usageError{err}
		}
		return err
	}
	if o.out == "" {
		return t.Write(e.stdout)
	}
	if err := t.WriteFile(o.out); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "mdk: wrote %s\n", o.out)
	return writeTierSummary(e, t)
}

// writeTierSummary prints a tier's measured figures for a person.
func writeTierSummary(e *env, t *tier.Tier) error {
	p := t.PromotionNs
	fmt.Fprintf(e.stdout, "%s: swap-in p50 %s, p99 %s, max %s, mean %s", t.Name, tier.FormatNs(p.P50), tier.FormatNs(p.P99), tier.FormatNs(p.Max), tier.FormatNs(p.Mean))
	if r := t.ResidentTouchNs; r != nil {
		fmt.Fprintf(e.stdout, " (resident touch p50 %s)", tier.FormatNs(r.P50))
	}
	fmt.Fprintf(e.stdout, "; swap-out %s per page; %.0f bytes kept per 4096-byte page (content %s)\n", tier.FormatNs(t.DemotionNsPerPage), t.StoredBytesPerPage, t.Content)
	for _, c := range t.Contents {
		fmt.Fprintf(e.stdout, "  %-20s %7d pages  compressed %6.0f B/page  memory %6.0f B/page  same-filled %d  swap-in p50 %s p99 %s  swap-out %s/page\n",
			c.Name, c.Pages, float64(c.ComprBytes)/float64(max(c.Pages, 1)), c.StoredBytesPerPage(), c.SamePages,
			tier.FormatNs(c.PromotionNs.P50), tier.FormatNs(c.PromotionNs.P99), tier.FormatNs(c.DemotionNsPerPage))
	}
	return nil
}
