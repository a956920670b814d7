package cli

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"mdk/collect"
	"mdk/linux"
	"mdk/trace"
)

type recordOptions struct {
	pids         []int
	cgroup       string
	window       time.Duration
	duration     time.Duration
	out          string
	proc, sys    string
	exact        bool
	windowInstrs int64
	valgrind     string
	tracer       string
	sampleRate   string
	sampleSeed   uint64
	partitions   int
	tracker      string
	pages        string
}

func newRecordCmd(e *env) *cobra.Command {
	var o recordOptions
	cmd := &cobra.Command{
		Use:   "record (--pid PID... | --cgroup PATH) -o FILE | record --exact -o FILE -- CMD ARGS...",
		Short: "Record a trace from live processes (idle page tracking) or a program run (valgrind)",
		Long: `Record makes a trace of real programs, written to FILE in the format of its
extension (.mdkt binary, .txt text). docs/record.md is the full manual.

Live processes (--pid, repeatable, or --cgroup): every --window, mdk reads
the targets' /proc/PID/maps and /proc/PID/pagemap, reads back the idle bits
of their pages in /sys/kernel/mm/page_idle/bitmap and marks them idle again:
a bit cleared since the last scan means accessed (a), a page that appeared is
born (b), one that disappeared is freed (f), a page swapped back in is
accessed. Space N in the trace is the N-th pid seen (the trace description
lists them). With --cgroup, cgroup.procs is read at every scan. Needs root
(CAP_SYS_ADMIN) and a kernel with CONFIG_IDLE_PAGE_TRACKING; the kernel files
are found under --proc and --sys. The recorder's cost per window goes to
standard error, a summary into the trace description.

--exact: runs CMD ARGS under valgrind and records the page of every
instruction fetch and data access, in windows of --window-instructions
executed instructions. The program's standard streams are mdk's. --tracer
pages runs mdk's own valgrind tool, which keeps each window's page set inside
the traced process and writes only its distinct pages (built with gcc on first
use against Debian's valgrind package and cached in ~/.cache/mdk, or
$MDK_CACHE_DIR); --tracer lackey runs valgrind's lackey and parses its log of
every access: the same trace at 100-400 times the CPU time. The default, auto, is pages
when the tool can be built, else lackey (saying why).

--tracker damon: accesses come from DAMON (/sys/kernel/mm/damon/admin, vaddr
operations), the tracker stock distribution kernels have: one window per
aggregation interval (= --window); a region DAMON saw accessed makes all its
existing pages accessed (an approximation: see docs/record.md). One --pid.
mdk uses a kdamond only if none exists or one is off and unconfigured, and
refuses when every kdamond is busy; it never takes one over.

--pages physical: a page is a page frame, counted once however many target
processes map it (shared memory, copy-on-write after fork, file pages); the
kernel reclaims it once. Default: virtual (a process's virtual page).

Each window is written as it completes. Recording ends after --duration,
when every target has exited (the cgroup is removed; CMD exits), or on
Ctrl-C; the trace then holds every completed window. Killed outright, the
recorder leaves every completed window readable in a .mdkt file.

EXIT STATUS
  0    the trace was written (also when a live recording is stopped by Ctrl-C)
  1    recording failed: no such process, no permission, no idle page
       tracking, no DAMON or every kdamond busy, valgrind missing, I/O error
  2    bad command line
  130  --exact interrupted (the windows so far are kept)
  N    --exact: the program exited with status N (not 0); the trace of
       what it did is still written`,
		Example: `  sudo mdk record --pid 1234 --window 30s --duration 1h -o app.mdkt
  sudo mdk record --cgroup /sys/fs/cgroup/system.slice/db.service --window 10s -o db.mdkt
  sudo mdk record --cgroup /sys/fs/cgroup/app --pages physical -o app-frames.mdkt
  sudo mdk record --pid 1234 --tracker damon --window 5s -o app-damon.mdkt
  mdk record --exact --window-instructions 1000000 -o gzip.mdkt -- gzip -k big.txt`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseZero(cmd.Flags(), "duration"); err != nil {
				return err
			}
			if !cmd.Flags().Changed("partitions") {
				o.partitions = -1
			}
			return runRecord(e, o, args)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false)
	f.IntSliceVar(&o.pids, "pid", nil, "record process `PID` (repeatable)")
	f.StringVar(&o.cgroup, "cgroup", "", "record the processes of the cgroup directory `PATH`")
	f.DurationVar(&o.window, "window", trace.DefaultWindow, "window `length` of a live recording")
	f.DurationVar(&o.duration, "duration", 0, "stop after this `duration` (default: until the targets exit or Ctrl-C)")
	f.StringVarP(&o.out, "output", "o", "", "trace `FILE` to write (.mdkt or .txt)")
	f.StringVar(&o.proc, "proc", envOr("MDK_PROC", linux.DefaultProc), "procfs mount point `DIR` ($MDK_PROC)")
	f.StringVar(&o.sys, "sys", envOr("MDK_SYS", linux.DefaultSys), "sysfs mount point `DIR` ($MDK_SYS)")
	f.BoolVar(&o.exact, "exact", false, "trace the program CMD exactly under valgrind")
	f.Int64Var(&o.windowInstrs, "window-instructions", collect.DefaultWindowInstructions, "window length of --exact, in executed `instructions`")
	f.StringVar(&o.valgrind, "valgrind", "valgrind", "valgrind `program` for --exact")
	f.StringVar(&o.tracer, "tracer", collect.TracerAuto, "--exact tracer: auto, pages (mdk's valgrind tool) or lackey")
	f.StringVar(&o.sampleRate, "sample", "", "record only a spatial sample of the pages: `RATE` such as 1% (1/N of 100%); the trace says so and every command scales its counts")
	f.Uint64Var(&o.sampleSeed, "sample-seed", 1, "`seed` of the sampling hash of (space, page)")
	f.IntVar(&o.partitions, "partitions", 0, fmt.Sprintf("write a binary trace of `N` partitions by the sampling hash, so that a later --sample reads only its part (0: unpartitioned; 1..%d; default: %d with --sample into a .mdkt file, else 0)", trace.MaxPartitions, recordPartitions))
	f.StringVar(&o.tracker, "tracker", "idle", "how accesses are seen: `idle` (idle page tracking) or damon")
	f.StringVar(&o.pages, "pages", "virtual", "what a page is: `virtual` (per process) or physical (page frame, counted once)")
	return cmd
}

// recordPartitions is the partition count of mdk record --sample into a
// binary file: a sampled trace is small, so its partitions are few (a
// partition's window should hold a thousand accesses or more,
// docs/trace-format.md); a sample of it at a tenth of its rate reads one.
const recordPartitions = 10

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func runRecord(e *env, o recordOptions, args []string) error {
	if o.out == "" || o.out == "-" {
		return usagef("record needs -o FILE (a .mdkt or .txt file; standard output is not supported)")
	}
	if _, err := trace.FormatForPath(o.out); err != nil {
		return usagef("-o: %v: name the file .mdkt (binary) or .txt (text)", err)
	}
	var sample trace.Sample
	if o.sampleRate != "" {
		ppm, err := trace.ParseSampleRate(o.sampleRate)
		if err != nil {
			return usagef("--sample: %v", err)
		}
		sample = trace.Sample{PPM: ppm, Seed: o.sampleSeed}
	}
	of, _ := trace.FormatForPath(o.out)
	isBinary := of != nil && of.Name == "binary"
	switch {
	case o.partitions < 0 && o.sampleRate != "" && isBinary && !o.exact:
		o.partitions = recordPartitions
	case o.partitions < 0:
		o.partitions = 0
	case o.partitions > 0 && !isBinary:
		return usagef("--partitions: only the binary format is partitioned: name the file .mdkt")
	case o.partitions > 0 && o.exact:
		return usagef("--partitions applies to a live recording; partition an --exact trace afterwards with mdk convert --partitions")
	}
	if err := (trace.Partitioning{Count: o.partitions}).Validate(); err != nil {
		return usagef("--partitions: %v", err)
	}
	if o.exact {
		if o.sampleRate != "" {
			return usagef("--sample applies to a live recording; sample an --exact trace afterwards with mdk convert --sample")
		}
		if len(o.pids) > 0 || o.cgroup != "" {
			return usagef("--exact runs a program: it takes CMD ARGS, not --pid or --cgroup")
		}
		if len(args) == 0 {
			return usagef("--exact needs a program to run: mdk record --exact -o FILE -- CMD ARGS...")
		}
		if o.windowInstrs < 1 {
			return usagef("--window-instructions must be at least 1, got %d", o.windowInstrs)
		}
		switch o.tracer {
		case collect.TracerAuto, collect.TracerPages, collect.TracerLackey:
		default:
			return usagef("--tracer must be auto, pages or lackey, got %q", o.tracer)
		}
		res, err := collect.RunExactFile(e.ctx, collect.ExactOptions{
			Valgrind: o.valgrind, WindowInstructions: o.windowInstrs, Tracer: o.tracer, Log: e.stderr,
			Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr,
		}, args, o.out)
		if err != nil {
			return err
		}
		what := fmt.Sprintf("%d instructions", res.Instructions)
		if res.Tracer == collect.TracerLackey {
			what = fmt.Sprintf("%d lackey trace lines", res.Lines)
		}
		fmt.Fprintf(e.stderr, "mdk record: %d windows of %d instructions (%s, %s) to %s; the program exited with status %d\n",
			res.Windows, o.windowInstrs, res.Tracer, what, o.out, res.ExitCode)
		if res.ExitCode != 0 {
			// The trace of what it did is kept; the failure is the
			// program's, and its status is mdk's (as env and timeout do).
			code := res.ExitCode
			if code < 0 || code > 255 {
				code = ExitError
			}
			kept := "its trace (" + strconv.Itoa(res.Windows) + " windows) is in " + o.out
			if res.Windows == 0 {
				kept = "it completed no window"
			}
			return exitError{code, fmt.Errorf("record: the program failed (exit status %d); %s", res.ExitCode, kept)}
		}
		return nil
	}
	if len(args) > 0 {
		return usagef("unexpected arguments %q (to trace a program, use --exact -- CMD ARGS...)", args)
	}
	for _, pid := range o.pids {
		if pid <= 0 {
			return usagef("--pid %d: a process ID is a positive number", pid)
		}
	}
	if (len(o.pids) == 0) == (o.cgroup == "") {
		return usagef("give --pid PID (repeatable) or --cgroup PATH, or --exact -- CMD")
	}
	if err := checkLiveWindow(o.window); err != nil {
		return err
	}
	if o.tracker != "idle" && o.tracker != "damon" {
		return usagef("--tracker must be idle or damon, got %q", o.tracker)
	}
	if o.pages != "virtual" && o.pages != "physical" {
		return usagef("--pages must be virtual or physical, got %q", o.pages)
	}
	if o.tracker == "damon" && len(o.pids) != 1 {
		return usagef("--tracker damon records one process: give one --pid")
	}
	if o.tracker == "damon" && o.pages == "physical" {
		return usagef("--pages physical needs --tracker idle (DAMON's vaddr operations see virtual pages)")
	}
	if o.duration < 0 || o.duration > 0 && o.duration < o.window {
		return usagef("--duration %v is shorter than one --window (%v)", o.duration, o.window)
	}
	r, err := collect.NewRecorder(collect.Options{
		FS: linux.NewFS(o.proc, o.sys), PIDs: o.pids, Cgroup: o.cgroup,
		Window: o.window, Duration: o.duration, Log: e.stderr, Sample: sample, Partitions: o.partitions,
		Tracker: collect.Tracker(o.tracker), Pages: collect.PageKey(o.pages),
	})
	if err != nil {
		return err
	}
	defer r.Close()
	sum, err := r.RecordFile(e.ctx, o.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "mdk record: %d windows to %s; %s\n", sum.Windows, o.out, sum)
	return nil
}
