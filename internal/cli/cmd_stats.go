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
	maps string
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

If the trace has a mappings sidecar (TRACE.maps, docs/trace-format.md;
--maps names another file), stats also lists its memory regions, largest
first: the trace's pages in each mapping, their bytes and access records
(the top 10 and the rest summed; JSON: every one, under "regions").

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
	cmd.Flags().StringVar(&o.maps, "maps", "", "the trace's mappings sidecar `FILE` (default: TRACE.maps if it exists)")
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
	var regions []stats.Region
	var from string
	if readErr == nil {
		if regions, from, err = e.statsRegions(path, o.maps); err != nil {
			return err
		}
	}
	switch {
	case o.json && regions != nil:
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(struct {
			*stats.Stats
			Regions []stats.Region `json:"regions"`
		}{s, regions})
	case o.json:
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(s)
	default:
		err = s.WriteText(e.stdout)
		if err == nil && regions != nil {
			err = stats.WriteRegions(e.stdout, regions, from, 10)
		}
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

// statsRegions returns the regions of the trace at path by the mappings of
// maps or of its sidecar (nil if it has none), reading it once more.
func (e *env) statsRegions(path, maps string) ([]stats.Region, string, error) {
	file := maps
	if file == "" {
		if path == "-" {
			return nil, "", nil
		}
		file = path + trace.MapsSuffix
	}
	ms, err := trace.ReadMapsFile(file)
	if err != nil {
		return nil, "", err
	}
	if ms == nil {
		if maps != "" {
			return nil, "", fmt.Errorf("--maps %s: no such file", maps)
		}
		return nil, "", nil
	}
	if path == "-" {
		return nil, "", usagef("--maps: the trace must be a file (it is read twice), not standard input")
	}
	r, c, err := e.openTrace(path)
	if err != nil {
		return nil, "", err
	}
	defer c.Close()
	rs, err := stats.Regions(ctxReader{r, e.ctx}, ms)
	return rs, fmt.Sprintf("%d mappings of %s", len(ms), file), err
}
