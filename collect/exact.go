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

	// The traced program's standard streams.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// ExactResult describes a finished exact trace.
type ExactResult struct {
	Windows  int
	Lines    int64 // lackey trace lines read (instructions and data accesses)
	ExitCode int   // the program's exit status, as valgrind reports it
}

// RunExact runs argv under valgrind's lackey tool (--tool=lackey
// --trace-mem=yes) and turns the memory trace into a trace written through
// the writer newWriter returns. Lackey writes its trace to its log, which
// RunExact points (--log-fd) at a pipe and streams through a
// [LackeyReader]: the raw log is never stored. The program's own standard
// streams are those of opt. Every window is written (and flushed, if the
// writer has a Flush method) as it completes.
//
// When ctx ends, valgrind is sent SIGTERM and the windows completed so far
// are kept. A program that exits non-zero still yields its trace; the status
// is in the result.
func RunExact(ctx context.Context, opt ExactOptions, argv []string, newWriter func(trace.Header) (trace.Writer, error)) (ExactResult, error) {
	var res ExactResult
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
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, err
	}
	defer pr.Close()
	// The pipe's write end becomes fd 3 in valgrind (ExtraFiles[0]).
	args := append([]string{"--tool=lackey", "--trace-mem=yes", "--log-fd=3", "--"}, argv...)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opt.Stdin, opt.Stdout, opt.Stderr
	cmd.ExtraFiles = []*os.File{pw}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	if err := cmd.Start(); err != nil {
		pw.Close()
		return res, fmt.Errorf("start valgrind: %w", err)
	}
	pw.Close()

	name := "lackey log of " + strings.Join(argv, " ")
	lr := NewLackeyReader(pr, name, opt.WindowInstructions).(*LackeyReader)
	w, err := newWriter(lr.Header())
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return res, err
	}
	var readErr error
	for {
		win, err := lr.Read()
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
	res.Lines = lr.Lines()
	if readErr != nil && ctx.Err() == nil {
		// Stop valgrind; it would block on a full pipe.
		cmd.Process.Kill()
		cmd.Wait()
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
		if res.Lines == 0 {
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
// extension names. The file is created only once valgrind has started.
func RunExactFile(ctx context.Context, opt ExactOptions, argv []string, out string) (ExactResult, error) {
	format, err := trace.FormatForPath(out)
	if err != nil {
		return ExactResult{}, err
	}
	var f *os.File
	res, err := RunExact(ctx, opt, argv, func(h trace.Header) (trace.Writer, error) {
		var err error
		if f, err = os.Create(out); err != nil {
			return nil, err
		}
		return format.NewWriter(f, h)
	})
	if f != nil {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	return res, err
}
