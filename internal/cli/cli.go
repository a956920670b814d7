// Package cli is the mdk command line: flag parsing, wiring and exit codes.
// It holds no model logic; every subcommand calls into the packages that own
// the concepts (trace, policy, sim, ...).
//
// Each subcommand lives in its own cmd_NAME.go with an options struct and a
// run function, and is registered in [commands].
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"mdk/trace"
)

// Exit codes (documented in the root command's help).
const (
	ExitOK        = 0   // success
	ExitError     = 1   // the command failed: bad input data, I/O error, ...
	ExitUsage     = 2   // bad command line: unknown flag, bad policy spec, ...
	ExitDiffer    = 3   // mdk verify found a difference
	ExitInterrupt = 130 // interrupted (SIGINT/SIGTERM)
)

// Version is mdk's version, printed by `mdk version`.
var Version = "0.1.0-dev"

// env is what every subcommand receives: its streams and the root context.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// usageError marks an error as a command-line mistake (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitError carries a specific exit code.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// commands lists every subcommand constructor, in help order.
var commands = []func(*env) *cobra.Command{
	newVersionCmd,
	newSimCmd,
	newMPCCmd,
	newReportCmd,
	newVerifyCmd,
	newDemoCmd,
	newLOPPCmd,
	newStatsCmd,
	newGenCmd,
	newConvertCmd,
	newCheckCmd,
	newRecordCmd,
	newTuneCmd,
	newImportCmd,
	newFleetCmd,
	newAgentCmd,
	newWorkloadCmd,
	newCalibrateCmd,
	newHeadroomCmd,
	newDiffCmd,
}

const rootLong = `mdk, the Memory Designer's Kit, computes what proactive memory-reclamation
policies would save and what they would cost in refaults (promotions), window
by window, on page-access traces.

A trace is read from a file or from standard input ("-"). Results go to
standard output, diagnostics to standard error. On a terminal, the long
commands (mpc, tune, verify, lopp train, report, demo) redraw one progress
line on standard error; never into a pipe or a file.

EXIT STATUS
  0    success
  1    the command failed (unreadable or malformed input, I/O error)
  2    bad command line (unknown flag, bad policy spec, missing argument)
  3    mdk verify found a difference between engines
  130  interrupted`

// Run runs mdk with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Version:       Version,
		Use:           "mdk",
		Short:         "Memory Designer's Kit: design and compare memory-reclamation policies",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("mdk {{.Version}}\n")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().IntVar(&trace.MaxWindows, "max-windows", trace.DefaultMaxWindows,
		"fail on a text trace declaring or reaching more than `N` windows (its empty windows cost no input, but every per-window table grows with them)")
	for _, mk := range commands {
		root.AddCommand(mk(e))
	}
	// Cobra types none of its own command-line errors, so each is marked
	// where it arises: flag errors by the flag error function above,
	// argument counts by exactArgs, and an unknown command here, by
	// resolving the command line the way Execute will.
	root.InitDefaultHelpCmd()
	if _, _, err := root.Find(args); err != nil {
		fmt.Fprintf(stderr, "mdk: %v\n", err)
		return ExitUsage
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "mdk: interrupted")
		return ExitInterrupt
	}
	fmt.Fprintf(stderr, "mdk: %v\n", err)
	var ue usageError
	var ee exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		return ExitUsage
	}
	return ExitError
}

// exactArgs is cobra.ExactArgs returning a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %d argument(s), got %d (see %s --help)", cmd.Name(), n, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// openInput opens path for reading; "-" is standard input.
func (e *env) openInput(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(e.stdin), nil
	}
	return os.Open(path)
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mdk's version",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Fprintf(e.stdout, "mdk %s\n", Version)
			return nil
		},
	}
}
