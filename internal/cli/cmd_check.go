package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"mdk/trace"
)

type checkOptions struct {
	salvage string
	format  string
}

func newCheckCmd(e *env) *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check TRACE",
		Short: "Verify every block of a trace and report what is intact",
		Long: `Check reads the whole trace TRACE (any known format, "-" for standard
input), verifying every window: for a binary trace each block's CRC-32C,
size fields, compression and contents (docs/trace-format.md). It prints the
header, the intact windows and records, and the first damage with its byte
offset (binary) or line (text).

--salvage OUT writes the intact windows to OUT as a valid trace, in the
format of OUT's extension or --format; its header leaves the window count
open, and the file ends after the last intact window.

EXIT STATUS
  0    the trace is intact
  1    the trace is damaged (the intact part is reported) or unreadable
  2    bad command line`,
		Example: `  mdk check trace.mdkt
  mdk check crashed.mdkt --salvage fixed.mdkt`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(e, o, args[0]) },
	}
	cmd.Flags().StringVar(&o.salvage, "salvage", "", "write the intact windows to `OUT`")
	cmd.Flags().StringVar(&o.format, "format", "", "`format` of the --salvage output: text or binary (default: by extension)")
	return cmd
}

func runCheck(e *env, o checkOptions, path string) error {
	var f *trace.Format
	if o.salvage != "" {
		var err error
		if f, err = outputFormat(o.format, o.salvage); err != nil {
			return err
		}
		if sameFile(path, o.salvage) {
			return usagef("check: --salvage would overwrite the trace %s", path)
		}
	}
	r, c, err := e.openTrace(path)
	if err != nil {
		return err
	}
	defer c.Close()
	var out *traceOutput
	var salvage trace.Writer
	if f != nil {
		h := r.Header()
		h.Windows = 0
		if out, err = e.createTrace(f, o.salvage, h); err != nil {
			return err
		}
		salvage = out
	}
	s, werr := trace.Check(ctxReader{r, e.ctx}, salvage)
	if errors.Is(s.Err, context.Canceled) {
		if out != nil {
			out.abort()
		}
		return s.Err
	}
	if werr != nil {
		out.abort()
		return fmt.Errorf("salvage: %w", werr)
	}
	if out != nil {
		if err := out.finish(); err != nil {
			return fmt.Errorf("salvage: %w", err)
		}
	}
	h := s.Header
	declared := "window count not declared"
	if h.Windows > 0 {
		declared = fmt.Sprintf("%d windows declared", h.Windows)
	}
	fmt.Fprintf(e.stdout, "trace: %s\nheader: page size %d, window %s, %s\n", path, h.PageSize, trace.FormatDuration(h.Window), declared)
	if h.Source != "" {
		fmt.Fprintf(e.stdout, "source: %s\n", h.Source)
	}
	last := "none"
	if s.Windows > 0 {
		last = fmt.Sprint(s.Windows - 1)
	}
	fmt.Fprintf(e.stdout, "intact: %d windows (last intact window: %s), %d pages, %d records (a %d, b %d, f %d)\n",
		s.Windows, last, s.Pages, s.Accesses+s.Births+s.Frees, s.Accesses, s.Births, s.Frees)
	if out != nil {
		fmt.Fprintf(e.stdout, "salvaged: %d windows to %s\n", s.Windows, o.salvage)
	}
	if s.Err != nil {
		fmt.Fprintf(e.stdout, "status: DAMAGED: %v\n", s.Err)
		return exitError{ExitError, fmt.Errorf("check: %s is damaged", path)}
	}
	fmt.Fprintln(e.stdout, "status: ok")
	return nil
}
