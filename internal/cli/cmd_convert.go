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
	format       string
	rate         string
	seed         uint64
	partitions   int
	parts        bool // --partitions was given
	cuts         string
	pageSize     string
	windowFactor int
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
and seed in OUT's header so that every command scales its counts.

--partitions N writes a partitioned binary trace (version 5): each window's
pages grouped into N partitions by the same seeded hash (--sample-seed), so
that a sample of it reads only its first partitions and the curves can be
computed partition by partition. With N >= 4 the partitions are a sample
ladder (0.1%, 0.9% and 9% of the pages: a 0.1%, 1% or 10% sample reads
exactly its pages) and N-3 equal partitions of the other 90%; 12 (nine of
10%) is the suggested N, 100 suits many cores at a cost in bytes
(docs/trace-format.md, version 5). --partition-cuts LIST gives the cuts
instead, as percentages of the pages: 0.1%,1%,10%,55% makes 5 partitions.
--partitions 0 writes an unpartitioned trace (version 1, or 2 if sampled);
without either flag OUT keeps IN's partitions (a sample of IN gets the
default cuts of IN's count).

What-ifs (docs/whatif.md): --page-size SIZE (4K, 2M, 1G or bytes; a
multiple of IN's page size) makes each page of SIZE one page, accessed in a
window if any of its pages is, alive while any of them is alive;
--window-factor K merges every K windows into one, a page accessed in it
if accessed in any, alive if alive in any. Births and frees follow from the
lives (docs/whatif.md states the rule). With IN's own page size and K = 1
the trace is copied unchanged; a coarsened trace is written unpartitioned
unless --partitions is given.

IN's mappings sidecar (IN.maps, docs/trace-format.md) is copied to OUT.maps.`,
		Example: `  mdk convert example.txt example.mdkt
  mdk convert trace.mdkt - --format text | less
  mdk gen -o - --format binary | mdk convert - big.txt
  mdk convert big.mdkt big-1pct.mdkt --sample 1%
  mdk convert big.mdkt big-parts.mdkt --partitions 12
  mdk convert big.mdkt big-parts.mdkt --partition-cuts 1%,10%,40%,70%
  mdk convert trace.mdkt huge.mdkt --page-size 2M
  mdk convert trace.mdkt slow.mdkt --window-factor 4`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.parts = cmd.Flags().Changed("partitions") || o.cuts != ""
			return runConvert(e, o, args[0], args[1])
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "", "output `format`: text or binary (default: by OUT's extension)")
	cmd.Flags().StringVar(&o.rate, "sample", "", "keep only a spatial sample of the pages: `RATE` such as 1% (1/N of 100%)")
	cmd.Flags().Uint64Var(&o.seed, "sample-seed", 1, "`seed` of the sampling hash (and of the partitions')")
	cmd.Flags().IntVar(&o.partitions, "partitions", 0, fmt.Sprintf("write a partitioned binary trace of `N` partitions (1..%d; 0: unpartitioned; default: as IN)", trace.MaxPartitions))
	cmd.Flags().StringVar(&o.cuts, "partition-cuts", "", "write a partitioned binary trace cut at `LIST`, increasing percentages of the pages such as 0.1%,1%,10%,55% (0 and 100% implied)")
	cmd.Flags().StringVar(&o.pageSize, "page-size", "", "what-if: pages of `SIZE` (4K, 2M, 1G or bytes), a multiple of IN's (docs/whatif.md)")
	cmd.Flags().IntVar(&o.windowFactor, "window-factor", 1, "what-if: merge every `K` windows into one (docs/whatif.md)")
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
	return e.createTraceParts(f, path, h, trace.Partitioning{})
}

// createTraceParts starts a trace as createTrace does, partitioned (a
// binary trace of version 3) if parts is on.
func (e *env) createTraceParts(f *trace.Format, path string, h trace.Header, parts trace.Partitioning) (*traceOutput, error) {
	out := &traceOutput{}
	var w io.Writer = e.stdout
	if path != "-" {
		file, err := outfile.Create(path)
		if err != nil {
			return nil, err
		}
		out.file, w = file, file
	}
	newWriter := f.NewWriter
	if parts.On() {
		newWriter = func(w io.Writer, h trace.Header) (trace.Writer, error) {
			return trace.NewPartitionedWriter(w, h, parts)
		}
	}
	tw, err := newWriter(w, h)
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
	if r, err = coarsen(r, o); err != nil {
		return err
	}
	var parts trace.Partitioning
	if pr, ok := r.(trace.PartitionedReader); ok && f.Name == "binary" {
		parts = pr.Partitioning()
	}
	if sr, ok := r.(*trace.SampleReader); ok && f.Name == "binary" {
		parts = sr.Partitioning()
	}
	rate := uint64(trace.SampleAll)
	if h := r.Header(); !h.Sample.All() {
		rate = uint64(h.Sample.PPM)
	}
	if parts.On() && uint64(parts.Cuts[parts.Count]) != rate {
		// A sample of IN: its digits end below IN's cuts.
		parts.Cuts = nil
	}
	if o.parts {
		parts = trace.Partitioning{Count: o.partitions, Seed: o.seed}
		if o.cuts != "" {
			cuts, err := trace.ParsePartitionCuts(o.cuts, rate)
			if err != nil {
				return usagef("--partition-cuts: %v", err)
			}
			if o.partitions != 0 && o.partitions != len(cuts)-1 {
				return usagef("--partitions %d with --partition-cuts of %d partitions", o.partitions, len(cuts)-1)
			}
			parts.Count, parts.Cuts = len(cuts)-1, cuts
		}
		if err := parts.Validate(); err != nil {
			return usagef("--partitions: %v", err)
		}
		if parts.On() && f.Name != "binary" {
			return usagef("--partitions: only the binary format is partitioned")
		}
	}
	w, err := e.createTraceParts(f, out, r.Header(), parts)
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
	if err := w.finish(); err != nil {
		return err
	}
	return copyMaps(in, out)
}

// copyMaps copies IN's mappings sidecar (IN.maps), if it has one, to
// OUT.maps, so that the mappings travel with the trace (byte addresses:
// valid at any page size and window length).
func copyMaps(in, out string) error {
	if in == "-" || out == "-" {
		return nil
	}
	ms, err := trace.ReadMapsFile(in + trace.MapsSuffix)
	if err != nil || ms == nil {
		return err
	}
	return writeFile(out+trace.MapsSuffix, func(w io.Writer) error { return trace.WriteMaps(w, ms) })
}

// copyCtx copies r to w and closes w, stopping when the command is cancelled.
func copyCtx(e *env, w trace.Writer, r trace.Reader) (int, error) {
	return trace.Copy(w, ctxReader{r, e.ctx})
}

// coarsen applies --page-size and --window-factor to r (r itself when
// they change nothing).
func coarsen(r trace.Reader, o convertOptions) (trace.Reader, error) {
	c := trace.Coarsen{PageFactor: 1, WindowFactor: o.windowFactor}
	if o.windowFactor < 1 {
		return nil, usagef("--window-factor %d: want 1 or more", o.windowFactor)
	}
	if o.pageSize != "" {
		size, err := parseSize(o.pageSize)
		if err != nil || size <= 0 || size > 1<<40 {
			return nil, usagef("--page-size: %q: want a positive size such as 4096, 4K, 2M or 1G (at most 1T)", o.pageSize)
		}
		src := int64(r.Header().PageSize)
		if size%src != 0 {
			return nil, usagef("--page-size %s: not a multiple of the trace's page size %d", o.pageSize, src)
		}
		c.PageFactor = int(min(size/src, 1<<30))
	}
	if c.PageFactor == 1 && c.WindowFactor == 1 {
		return r, nil
	}
	cr, err := trace.NewCoarsenReader(r, c)
	if err != nil {
		return nil, usageError{err}
	}
	return cr, nil
}
