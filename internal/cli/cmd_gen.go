package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"mdk/gen"
	"mdk/internal/memlimit"
)

type genOptions struct {
	cfg    gen.Config
	out    string
	format string
	params []string
}

const genLong = `Gen writes a synthetic trace, deterministic for a seed: the same flags give a
byte-identical file on every machine. It streams: memory is proportional to
--pages, not to the number of records. The defaults (mix, 100000 pages, 240
windows of 30s) give about 4.5 million access records.

MODELS
  zipf    pages ranked by popularity, ranks shuffled over page numbers; the
          top HotFraction are accessed with probability HotProb per window,
          rank r beyond them with HotProb*(r0/r)^Exponent, at least ColdProb
  scan    an array of ArrayFraction of the pages swept every Period windows,
          one slice per window over SweepWindows windows (each page of the
          slice accessed with SweepProb); the other pages are a hot set
          accessed with HotProb per window
  phases  a working set of WorkingSetFraction of the pages (a contiguous
          range at a random start) moves every PhaseWindows windows; its pages
          are accessed with Prob per window, the others with BackgroundProb
  churn   about AliveFraction of the pages alive; a live page is accessed
          with AccessProb and freed (f) with 1/Lifetime per window; births
          reuse the most recently freed page numbers and are accessed in
          their first window with BirthAccessed, else get a b event
  mix     all four side by side, each in its own address space (0 zipf,
          1 scan, 2 phases, 3 churn), with these shares of the pages

--param model.Field=value sets one parameter (repeatable, case-insensitive).
Parameters and their defaults:
`

func newGenCmd(e *env) *cobra.Command {
	o := genOptions{cfg: gen.DefaultConfig}
	var params strings.Builder
	for _, p := range o.cfg.Params() {
		fmt.Fprintf(&params, "  %-28s %s\n", p.Name, p.Value)
	}
	cmd := &cobra.Command{
		Use:   "gen [flags]",
		Short: "Generate a synthetic trace (zipf, scan, phases, churn, mix)",
		Long: genLong + params.String() + `
The output format follows -o's extension (.mdkt binary, .txt text) or
--format; -o - (the default) writes to standard output and needs --format.
docs/gen.md describes the models in detail.`,
		Example: `  mdk gen -o mix.mdkt
  mdk gen --model zipf --pages 1000000 --windows 240 --seed 7 -o zipf.mdkt
  mdk gen --model scan --param scan.Period=20 --format text | head
  mdk gen --format binary | mdk stats -`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return runGen(e, o) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.cfg.Model, "model", o.cfg.Model, "`model`: zipf, scan, phases, churn or mix")
	fl.IntVar(&o.cfg.Pages, "pages", o.cfg.Pages, "distinct page `count`")
	fl.IntVar(&o.cfg.Windows, "windows", o.cfg.Windows, "window `count`")
	fl.DurationVar(&o.cfg.Window, "window", o.cfg.Window, "window `length`")
	fl.IntVar(&o.cfg.PageSize, "page-size", o.cfg.PageSize, "page size in `bytes`")
	fl.Uint64Var(&o.cfg.Seed, "seed", o.cfg.Seed, "random `seed`")
	fl.StringVarP(&o.out, "output", "o", "-", "output `file` (- for standard output)")
	fl.StringVar(&o.format, "format", "", "output `format`: text or binary (default: by extension)")
	fl.StringArrayVar(&o.params, "param", nil, "set a model parameter, `model.Field=value`")
	return cmd
}

func runGen(e *env, o genOptions) error {
	for _, p := range o.params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return usagef("--param %q: want model.Field=value", p)
		}
		if err := o.cfg.Set(k, v); err != nil {
			return usagef("--param: %v", err)
		}
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError{err}
	}
	if err := memlimit.Check(fmt.Sprintf("gen: --pages %d", o.cfg.Pages), o.cfg.MemoryNeed()); err != nil {
		return err
	}
	f, err := outputFormat(o.format, o.out)
	if err != nil {
		return err
	}
	w, err := e.createTrace(f, o.out, o.cfg.Header())
	if err != nil {
		return err
	}
	if _, err := copyCtx(e, w, gen.NewReader(o.cfg)); err != nil {
		w.abort()
		return err
	}
	return w.finish()
}
