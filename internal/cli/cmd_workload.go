package cli

import (
	"github.com/spf13/cobra"

	"mdk/trace"
	"mdk/workload"
)

func newWorkloadCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "Workloads for mdk agent (replay a trace's accesses in a real process)",
		Args:  exactArgs(0),
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	var o workload.Options
	replay := &cobra.Command{
		Use:   "replay TRACE",
		Short: "Allocate a trace's pages and touch each window's pages when told (mdk agent --replay)",
		Long: `Replay is the cooperative workload of mdk agent's replay tracker. It maps
one private anonymous page per page of TRACE, then serves commands on
standard input: "w K" releases the pages freed in window K-1 (MADV_DONTNEED),
writes one byte of every page accessed in window K, timing each write, and
of every page born in window K; "q" or the end of input ends it. It writes
JSON lines on standard output: first the pid, the address of page 0 and the
page count, then, for each window, what it felt: touches, touches per second
and the latency distribution of the touches (a touch that swaps a page in
is slow). With --window D it keeps its own clock instead (window k's
touches at k*D + D/2 from its start) and ends at the end of its input, for
a live agent (mdk agent --pid). mdk agent --replay starts it itself; it never reads the clock
except to time its touches, so its pace is the agent's window clock.

The package documentation of mdk/workload has the protocol.

EXIT STATUS
  0    the input ended or "q"
  1    bad trace, bad command, or mapping failed`,
		Example: `  printf 'w 0\nw 1\nq\n' | mdk workload replay trace.mdkt`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseZero(cmd.Flags(), "window"); err != nil {
				return err
			}
			rd, c, err := trace.Open(args[0])
			if err != nil {
				return err
			}
			t, err := trace.ReadAll(rd)
			c.Close()
			if err != nil {
				return err
			}
			return workload.Replay(t, o, e.stdin, e.stdout)
		},
	}
	replay.Flags().DurationVar(&o.Window, "window", 0, "keep its own clock: touch window k's pages at k*`D`+D/2 from the start, without commands (for mdk agent --pid)")
	replay.Flags().IntVar(&o.Lock, "lock", 0, "mlock the first `N` pages, which MADV_PAGEOUT then refuses (for testing refusals)")
	cmd.AddCommand(replay)
	return cmd
}
