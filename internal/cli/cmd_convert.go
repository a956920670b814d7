package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"mdk/internal/outfile"
	"mdk/trace"
)

type convertOptions struct {
	format string
	rate   string
	seed   uint64
}

func newConvertCmd(e *env) *cobra.Command {
	var o convertOptions
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a trace between the text and binary formats",
		Long: `Convert reads the trace IN in any known format (told by its first bytes) and
writes it to OUT in the format of OUT's extension: .txt for text, .mdkt for
binary (docs/trace-format.md). --format text|binary overrides the extension.
"-" is standard input for IN and standard output for OUT; writing to
standard output needs --format.

Conversions are lossless: text -> binary -> text gives the same events, and
binary -> text -> binary gives a byte-identical file.

If IN is damaged, convert writes nothing further after the last intact
window, removes OUT (unless it is standard output) and exits with status 1;
use mdk check --salvage to keep the intact prefix.

--sample RATE writes only the pages a seeded hash of (space, page) keeps
(the sample of mdk mpc --sample, and of mdk record --sample), with the rate
and seed in OUT's header so that every command scales its counts.`,
		Example: `  mdk convert example.txt example.mdkt
  mdk convert trace.mdkt - --format text | less
  mdk gen -o - --format binary | mdk convert - big.txt
  mdk convert big.mdkt big-1pct.mdkt --sample 1%`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runConvert(e, o, args[0], args[1]) },
	}
	cmd.Flags().StringVar(&o.format, "format", "", "output `format`: text or binary (default: by OUT's extension)")
	cmd.Flags().StringVar(&o.rate, "sample", "", "keep only a spatial sample of the pages: `RATE` such as 1% (1/N of 100%)")
	cmd.Flags().Uint64Var(&o.seed, "sample-seed", 1, "`seed` of the sampling hash")
	return cmd
}

// outputFormat picks the trace format for path from --format or the
// extension.
func outputFormat(format, path string) (*trace.Format, error) {
	if format != "" {
		f, err := trace.FormatByName(format)
		if err != nil {
			return nil, usagef("--format: %v", err)
		}
		return f, nil
	}
	if path == "-" {
		return nil, usagef("writing a trace to standard output needs --format text or --format binary")
	}
	f, err := trace.FormatForPath(path)
	if err != nil {
		return nil, usagef("%v; use --format", err)
	}
	return f, nil
}

// traceOutput is a trace being written to a file or standard output.
type traceOutput struct {
	trace.Writer
	file *outfile.File // nil for standard output
}

// createTrace starts a trace in format f at path ("-": standard output).
func (e *env) createTrace(f *trace.Format, path string, h trace.Header) (*traceOutput, error) {
	out := &traceOutput{}
	var w io.Writer = e.stdout
	if path != "-" {
		file, err := outfile.Create(path)
		if err != nil {
			return nil, err
		}
		out.file, w = file, file
	}
	tw, err := f.NewWriter(w, h)
	if err != nil {
		out.abort()
		return nil, err
	}
	out.Writer = tw
	return out, nil
}

// finish renames the file into place after the writer was closed.
func (o *traceOutput) finish() error {
	if o.file == nil {
		return nil
	}
	return o.file.Commit()
}

// abort removes the partial output; an existing file of that name stays
// as it was.
func (o *traceOutput) abort() {
	if o.file != nil {
		o.file.Abort()
	}
}

// sameFile reports whether two paths name one existing file.
func sameFile(a, b string) bool {
	if a == "-" || b == "-" {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func runConvert(e *env, o convertOptions, in, out string) error {
	f, err := outputFormat(o.format, out)
	if err != nil {
		return err
	}
	if sameFile(in, out) {
		return usagef("convert: IN and OUT are the same file %s", in)
	}
	r, c, err := e.openTrace(in)
	if err != nil {
		return err
	}
	defer c.Close()
	if o.rate != "" {
		so := sampleOptions{rate: o.rate, seed: o.seed, groups: 2}
		req, _, err := so.parse()
		if err != nil {
			return err
		}
		s, err := r.Header().Sample.Within(req)
		if err != nil {
			return usagef("--sample: %v", err)
		}
		if r, err = trace.NewSampleReader(r, s); err != nil {
			return err
		}
	}
	w, err := e.createTrace(f, out, r.Header())
	if err != nil {
		return err
	}
	if _, err := copyCtx(e, w, r); err != nil {
		w.abort()
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, new(*trace.CorruptError)) {
			return fmt.Errorf("%w (mdk check --salvage keeps the intact windows)", err)
		}
		return err
	}
	return w.finish()
}

// copyCtx copies r to w and closes w, stopping when the command is cancelled.
func copyCtx(e *env, w trace.Writer, r trace.Reader) (int, error) {
	return trace.Copy(w, ctxReader{r, e.ctx})
}
