package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"mdk/stats"
	"mdk/trace"
)

type statsOptions struct {
	json bool
}

func newStatsCmd(e *env) *cobra.Command {
	var o statsOptions
	cmd := &cobra.Command{
		Use:   "stats TRACE",
		Short: "Summarise a trace: windows, pages, lives, accesses, gaps",
		Long: `Stats reads a trace once and prints what it holds, with lives, touches and
gaps exactly as SPEC section 1 defines them:

  windows and window length, page size, address spaces, distinct pages,
  lives, access records (the sum of |A_w|), births (lives started by a b),
  frees (lives ended by an f), ignored births (b of a page already alive)
  and ignored frees (f of a page not alive), |A_w| min/median/max over all
  windows (the median is the lower median), alive page-windows L, the peak
  number of pages alive in one window, and histograms of the idle lengths
  of closed and open gaps in buckets 0, 1, 2, 3-4, 5-8, 9-16, ...

TRACE is a trace file in any known format, or - for standard input.
--json prints one JSON object with stable snake_case keys.

If the trace is damaged, stats prints the numbers of the intact windows
before the damage (lives still alive end there), then reports the error
and exits with status 1.`,
		Example: `  mdk stats testdata/example.txt
  mdk stats trace.mdkt --json
  mdk gen ... | mdk stats -`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runStats(e, o, args[0]) },
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print a JSON object")
	return cmd
}

func runStats(e *env, o statsOptions, path string) error {
	r, c, err := e.openTrace(path)
	if err != nil {
		return err
	}
	defer c.Close()
	s, readErr := stats.Compute(ctxReader{r, e.ctx})
	if errors.Is(readErr, context.Canceled) {
		return readErr
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(s)
	} else {
		err = s.WriteText(e.stdout)
	}
	if readErr != nil {
		return fmt.Errorf("%w (the numbers above cover the %d windows before the error)", readErr, s.Windows)
	}
	return err
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	trace.Reader
	ctx context.Context
}

func (r ctxReader) Read() (*trace.Window, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	return r.Reader.Read()
}
