package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"mdk/trace"
)

// ExactOptions configure [RunExact].
type ExactOptions struct {
	Valgrind           string // valgrind program; "" means "valgrind" on $PATH
	WindowInstructions int64  // window length in executed instructions (> 0)
	// Tracer is TracerAuto (""), TracerPages or TracerLackey.
	Tracer string
	// Log receives mdk's own messages (which tracer runs, and why);
	// nil discards them.
	Log io.Writer

	// The traced program's standard streams.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// ExactResult describes a finished exact trace.
type ExactResult struct {
	Tracer       string // the tracer that ran: TracerPages or TracerLackey
	Windows      int
	Instructions int64 // instructions traced (TracerPages; 0 for TracerLackey)
	Lines        int64 // lackey trace lines read (instructions and data accesses); 0 for TracerPages
	ExitCode     int   // the program's exit status, as valgrind reports it
}

// RunExact runs argv under valgrind and turns its memory accesses into a
// trace written through the writer newWriter returns, in windows of
// opt.WindowInstructions executed instructions.
//
// With TracerPages, valgrind runs mdk's own tool (see [BuildPageTool]),
// which keeps the current window's page set inside the traced process and
// writes only each window's distinct pages ([PageToolReader]). With
// TracerLackey, valgrind runs its lackey tool (--tool=lackey
// --trace-mem=yes), whose log of every access RunExact reads from a pipe
// (--log-fd) through a [LackeyReader]; the raw log is never stored. Both
// give the same windows. TracerAuto is TracerPages if the tool can be
// built, else TracerLackey, saying why on opt.Log.
//
// The program's own standard streams are those of opt. Every window is
// written (and flushed, if the writer has a Flush method) as it completes.
// When ctx ends, valgrind is sent SIGTERM and the windows completed so far
// are kept. A program that exits non-zero still yields its trace; the status
// is in the result.
func RunExact(ctx context.Context, opt ExactOptions, argv []string, newWriter func(trace.Header) (trace.Writer, error)) (res ExactResult, err error) {
	if len(argv) == 0 {
		return res, errors.New("no program to run")
	}
	if opt.WindowInstructions < 1 {
		return res, fmt.Errorf("window must be at least 1 instruction, got %d", opt.WindowInstructions)
	}
	vg := opt.Valgrind
	if vg == "" {
		vg = "valgrind"
	}
	path, err := exec.LookPath(vg)
	if err != nil {
		return res, fmt.Errorf("%s not found (install the Debian package valgrind): %w", vg, err)
	}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format, args...)
		}
	}
	var toolDir string
	switch opt.Tracer {
	case TracerLackey:
	case TracerPages:
		if toolDir, err = BuildPageTool(path); err != nil {
			return res, err
		}
	case TracerAuto, "":
		if toolDir, err = BuildPageTool(path); err != nil {
			logf("mdk record: falling back to valgrind's lackey (100-400 times the CPU time): mdk's valgrind tool cannot be built: %v\n", err)
		}
	default:
		return res, fmt.Errorf("unknown tracer %q (want %s, %s or %s)", opt.Tracer, TracerAuto, TracerPages, TracerLackey)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, err
	}
	defer pr.Close()
	// The pipe's write end becomes fd 3 in valgrind (ExtraFiles[0]).
	var args []string
	if toolDir != "" {
		res.Tracer = TracerPages
		args = []string{"-q", PageToolArg(toolDir), "--mdk-fd=3", fmt.Sprintf("--mdk-window=%d", opt.WindowInstructions), "--"}
	} else {
		res.Tracer = TracerLackey
		args = []string{"--tool=lackey", "--trace-mem=yes", "--log-fd=3", "--"}
	}
	cmd := exec.CommandContext(ctx, path, append(args, argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opt.Stdin, opt.Stdout, opt.Stderr
	cmd.ExtraFiles = []*os.File{pw}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		pw.Close()
		return res, fmt.Errorf("start valgrind: %w", err)
	}
	pw.Close()
	stop := func() {
		// Stop valgrind; it would block on a full pipe.
		cmd.Process.Kill()
		cmd.Wait()
	}

	var rd trace.Reader
	traced := func() bool { return false }
	if toolDir != "" {
		name := PageToolName + " run of " + strings.Join(argv, " ")
		ptr, err := NewPageToolReader(pr, name, opt.WindowInstructions)
		switch {
		case errors.Is(err, io.EOF):
			// valgrind ended before the tool started: its status says why.
			werr := cmd.Wait()
			var ee *exec.ExitError
			if errors.As(werr, &ee) {
				return res, fmt.Errorf("valgrind exited with status %d before tracing anything", ee.ExitCode())
			}
			return res, fmt.Errorf("valgrind ended before tracing anything: %v", werr)
		case err != nil:
			stop()
			return res, err
		}
		rd = ptr
		traced = func() bool { return ptr.Instructions() > 0 }
		defer func() { res.Instructions = ptr.Instructions() }()
	} else {
		name := "lackey log of " + strings.Join(argv, " ")
		lr := NewLackeyReader(pr, name, opt.WindowInstructions).(*LackeyReader)
		rd = lr
		traced = func() bool { return lr.Lines() > 0 }
		defer func() { res.Lines = lr.Lines() }()
	}
	w, err := newWriter(rd.Header())
	if err != nil {
		stop()
		return res, err
	}
	var readErr error
	for {
		win, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		if err := w.WriteWindow(win); err != nil {
			readErr = fmt.Errorf("write window %d: %w", win.Index, err)
			break
		}
		if f, ok := w.(interface{ Flush() error }); ok {
			if err := f.Flush(); err != nil {
				readErr = fmt.Errorf("flush window %d: %w", win.Index, err)
				break
			}
		}
		res.Windows++
	}
	if readErr != nil && ctx.Err() == nil {
		stop()
		w.Close()
		return res, readErr
	}
	io.Copy(io.Discard, pr) // let valgrind finish its summary
	werr := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
	case errors.As(werr, &ee):
		res.ExitCode = ee.ExitCode()
		if !traced() {
			w.Close()
			return res, fmt.Errorf("valgrind exited with status %d before tracing anything", res.ExitCode)
		}
	case werr != nil:
		w.Close()
		return res, fmt.Errorf("valgrind: %w", werr)
	}
	if err := w.Close(); err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// RunExactFile is [RunExact] writing the trace file out, in the format its
// extension names. The file is written beside out and renamed to out once
// the first window is complete: a run that fails before that leaves an
// existing out as it was.
func RunExactFile(ctx context.Context, opt ExactOptions, argv []string, out string) (ExactResult, error) {
	tf, err := newTraceFile(out)
	if err != nil {
		return ExactResult{}, err
	}
	res, err := RunExact(ctx, opt, argv, tf.newWriter)
	return res, tf.finish(err)
}
