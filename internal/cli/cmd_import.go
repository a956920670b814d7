package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mdk/importer"
	"mdk/trace"
)

type importOptions struct {
	out, format    string
	window         time.Duration
	windowRequests int64
	windowInstrs   int64
	timeUnit       time.Duration
	mapping        string
	sectorSize     int64
	pageSize       int
	backwards      bool
	maxWindows     int64
	compression    string
	bigEndian      bool
	params         string
	timeCol        int
	idCol          int
	sizeCol        int
	header         bool
	delimiter      string
	idIsString     bool
}

func newImportCmd(e *env) *cobra.Command {
	var o importOptions
	var formats []string
	for _, f := range importer.Formats() {
		formats = append(formats, fmt.Sprintf("  %-15s %s", f.Name, f.Short))
	}
	cmd := &cobra.Command{
		Use:   "import FORMAT IN -o OUT",
		Short: "Convert a trace made by another tool (libCacheSim, DAMON, block, address traces) into an mdk trace",
		Long: `Import reads IN ("-": standard input), a trace in FORMAT, and writes an mdk
trace to OUT in the format of OUT's extension (.txt text, .mdkt binary) or
--format. Compressed input (gzip, xz, zstd, bzip2; zlib for damon) is
recognised by its first bytes and read directly. docs/import.md documents
every format and mapping choice.

Formats:
` + strings.Join(formats, "\n") + `

Pages: with --map object (csv, txt, oracle-general, lbn32 default) each
object id is one page, page number = id. With --map block a record at id
(in --sector-size byte units: 512 for csv and oracle-general, 1 for address)
of size bytes touches every --page-size page that its byte range overlaps.
DAMON regions with nr_accesses > 0 become every page they overlap; one
monitoring target is one page space.

Windows: timestamped records go to window floor((t - t0) / --window), t0
being the first timestamp, in ticks of --time-unit (csv, oracle-general;
DAMON times are nanoseconds). --window-requests N makes windows of N records
(for damon, N snapshots) instead; --window-instructions N windows of N
instructions (address, lackey). A record whose window is before the current
one is an error naming its line or byte offset, unless --allow-backwards
puts it in the current window. Every window from 0 to the last one is
written, empty ones included.

On error, OUT is removed and the exit status is 1.

EXIT STATUS
  0    the trace was written
  1    malformed input (the error names the line or byte offset), I/O error
  2    bad command line`,
		Example: `  mdk import csv cloudPhysicsIO.csv -o cp.mdkt --header --time-col 2 --obj-id-col 5 --obj-size-col 4 --map block
  mdk import csv trace.csv -o t.mdkt --params "time-col=2, obj-id-col=5, obj-size-col=4, has-header=true"
  mdk import oracle-general cloudPhysicsIO.oracleGeneral.bin -o cp.mdkt
  mdk import address gzip.trace.gz -o gzip.mdkt --window-requests 10000
  mdk import lbn32 w106.trace.xz -o w106.mdkt --window-requests 100000
  mdk import damon damon.data -o damon.mdkt --window 1s
  mdk import lackey lackey.log -o prog.mdkt --window-instructions 1000000`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error { return runImport(e, cmd, o, args[0], args[1]) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&o.out, "output", "o", "", "write the trace to `FILE` (required; \"-\" is standard output, with --format)")
	fl.StringVar(&o.format, "format", "", "output `format`: text or binary (default: by OUT's extension)")
	fl.DurationVar(&o.window, "window", trace.DefaultWindow, "window `length`: timestamps are bucketed by it; with --window-requests or --window-instructions only written to the header")
	fl.Int64Var(&o.windowRequests, "window-requests", 0, "windows of `N` records (snapshots for damon), ignoring timestamps")
	fl.Int64Var(&o.windowInstrs, "window-instructions", 0, "windows of `N` instructions (address, lackey)")
	fl.DurationVar(&o.timeUnit, "time-unit", 0, "`duration` of one timestamp tick in csv and oracle-general input (default 1s)")
	fl.StringVar(&o.mapping, "map", "", "how ids become pages: `object` (one page per id) or block (byte range of --sector-size units); default by format")
	fl.Int64Var(&o.sectorSize, "sector-size", 0, "bytes per id unit under --map block (default 512; 1 for address)")
	fl.IntVar(&o.pageSize, "page-size", trace.DefaultPageSize, "page size in `bytes`")
	fl.BoolVar(&o.backwards, "allow-backwards", false, "put records whose time falls before the current window into the current window instead of failing")
	fl.Int64Var(&o.maxWindows, "max-windows", importer.DefaultMaxWindows, "fail beyond `N` windows (guards against corrupt timestamps)")
	fl.StringVar(&o.compression, "compression", "auto", "input `compression`: auto, none, gzip, xz, zstd, bzip2, zlib")
	fl.BoolVar(&o.bigEndian, "big-endian", false, "lbn32: read big-endian block numbers")
	fl.StringVarP(&o.params, "params", "t", "", "csv/txt: libCacheSim-style `parameters` \"time-col=2, obj-id-col=5, obj-size-col=4, has-header=true, obj-id-is-num=true, delimiter=,\"")
	fl.IntVar(&o.timeCol, "time-col", 0, "csv/txt: timestamp `column` (1-based; 0 none)")
	fl.IntVar(&o.idCol, "obj-id-col", 0, "csv/txt: object id `column` (1-based; txt default 1)")
	fl.IntVar(&o.sizeCol, "obj-size-col", 0, "csv/txt: size `column` in bytes (1-based; 0 none)")
	fl.BoolVar(&o.header, "header", false, "csv/txt: the first line is a header")
	fl.StringVar(&o.delimiter, "delimiter", "", "csv/txt: field `delimiter`: a character, or comma, tab, space (runs of blanks), semicolon, pipe (default comma; txt space)")
	fl.BoolVar(&o.idIsString, "obj-id-is-string", false, "csv/txt: object ids are strings, numbered 0, 1, ... in order of first appearance")
	return cmd
}

// runImport checks the command line, builds the importer's options from the
// flags, imports IN into OUT (removed on error) and prints what it wrote.
func runImport(e *env, cmd *cobra.Command, o importOptions, format, in string) error {
	if err := refuseZero(cmd.Flags(), "window", "page-size", "max-windows", "time-unit", "sector-size", "window-requests", "window-instructions"); err != nil {
		return err
	}
	if o.out == "" {
		return usagef("import needs -o OUT")
	}
	of, err := outputFormat(o.format, o.out)
	if err != nil {
		return err
	}
	if sameFile(in, o.out) {
		return usagef("import: IN and OUT are the same file %s", in)
	}
	if _, err := importer.FormatByName(format); err != nil {
		return usagef("%v", err)
	}
	opts, err := o.importerOptions(cmd)
	if err != nil {
		return err
	}
	r, err := e.openInput(in)
	if err != nil {
		return err
	}
	defer r.Close()
	var out *traceOutput
	st, err := importer.Import(e.ctx, format, r, inputName(in), opts, func(h trace.Header) (trace.Writer, error) {
		var err error
		out, err = e.createTrace(of, o.out, h)
		return out, err
	})
	if err != nil {
		if out != nil {
			out.abort()
		}
		if errors.As(err, new(*importer.OptionError)) {
			return usageError{err}
		}
		return err
	}
	if err := out.finish(); err != nil {
		return err
	}
	msg := fmt.Sprintf("mdk import: %d records, %d page accesses, %d distinct pages, %d windows -> %s", st.Records, st.Accesses, st.Pages, st.Windows, o.out)
	if st.Backwards > 0 {
		msg += fmt.Sprintf(" (%d records moved forward by --allow-backwards)", st.Backwards)
	}
	fmt.Fprintln(e.stderr, msg)
	return nil
}

// inputName is how errors name IN: "stdin" for "-".
func inputName(in string) string {
	if in == "-" {
		return "stdin"
	}
	return in
}

// importerOptions builds the importer's options from the flags; a CSV
// column flag given on the command line overrides --params.
func (o importOptions) importerOptions(cmd *cobra.Command) (importer.Options, error) {
	m, err := importer.ParseMapping(o.mapping)
	if err != nil {
		return importer.Options{}, usagef("--map: %v", err)
	}
	opts := importer.Options{
		PageSize:           o.pageSize,
		Window:             o.window,
		WindowRequests:     o.windowRequests,
		WindowInstructions: o.windowInstrs,
		TimeUnit:           o.timeUnit,
		Map:                m,
		SectorSize:         o.sectorSize,
		AllowBackwards:     o.backwards,
		MaxWindows:         o.maxWindows,
		Compression:        o.compression,
		BigEndian:          o.bigEndian,
	}
	if o.params != "" {
		if err := opts.CSV.ParseParams(o.params); err != nil {
			return importer.Options{}, usagef("--params: %v", err)
		}
	}
	fl := cmd.Flags()
	if fl.Changed("time-col") {
		opts.CSV.TimeCol = o.timeCol
	}
	if fl.Changed("obj-id-col") {
		opts.CSV.IDCol = o.idCol
	}
	if fl.Changed("obj-size-col") {
		opts.CSV.SizeCol = o.sizeCol
	}
	if fl.Changed("header") {
		opts.CSV.Header = o.header
	}
	if fl.Changed("obj-id-is-string") {
		opts.CSV.IDIsString = o.idIsString
	}
	if o.delimiter != "" {
		d, err := importer.ParseDelimiter(o.delimiter)
		if err != nil {
			return importer.Options{}, usagef("--delimiter: %v", err)
		}
		opts.CSV.Delimiter = d
	}
	return opts, nil
}
