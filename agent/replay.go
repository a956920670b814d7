package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"mdk/trace"
	"mdk/workload"
)

// Replay is the replay tracker: it runs the cooperative workload
// (`mdk workload replay TRACE`) as a child process, tells it to touch each
// window's pages when the agent's window starts, and takes the trace as the
// access signal. It knows the future, so every policy, vmin and opp
// included, can be applied for real.
type Replay struct {
	t     *trace.Trace
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	hello workload.Hello
	last  *workload.Window
	done  chan error
	// exited is set when the workload ended before the trace did.
	exited bool
}

// StartReplay starts the workload argv (a command that serves the protocol
// of package workload on its standard streams for trace t, normally
// `mdk workload replay TRACE`) and reads its first line. The workload's
// standard error is stderr.
func StartReplay(t *trace.Trace, argv []string, stderr io.Writer) (*Replay, error) {
	if len(argv) == 0 {
		return nil, errors.New("agent: no workload command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start workload: %w", err)
	}
	r := &Replay{t: t, cmd: cmd, in: in, out: bufio.NewReader(outp), done: make(chan error, 1)}
	if err := r.read(&r.hello); err != nil {
		r.Close()
		return nil, fmt.Errorf("workload: first line: %w", err)
	}
	if r.hello.Pages != len(t.Pages) || r.hello.PageSize <= 0 || r.hello.Windows != len(t.Windows) {
		r.Close()
		return nil, fmt.Errorf("workload replays %d pages in %d windows (page size %d), the trace has %d pages in %d windows: not the same trace",
			r.hello.Pages, r.hello.Windows, r.hello.PageSize, len(t.Pages), len(t.Windows))
	}
	return r, nil
}

func (r *Replay) read(v any) error {
	line, err := r.out.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the workload exited: %w", io.ErrUnexpectedEOF)
		}
		return err
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("bad line %q: %w", line, err)
	}
	return nil
}

// Header returns the trace's header.
func (r *Replay) Header() trace.Header { return r.t.Header }

// Targets returns the workload's pid.
func (r *Replay) Targets() []int { return []int{r.hello.PID} }

// Future returns the whole trace.
func (r *Replay) Future() *trace.Trace { return r.t }

// Page returns the workload's virtual page of trace page id.
func (r *Replay) Page(id uint32) (int, uint64) {
	return 0, r.hello.Base/uint64(r.hello.PageSize) + uint64(id)
}

// Workload returns what the workload measured in the last window.
func (r *Replay) Workload() *workload.Window { return r.last }

// Next tells the workload to touch window k's pages and waits until it has.
func (r *Replay) Next(ctx context.Context, k int) (*trace.Window, error) {
	if k >= len(r.t.Windows) {
		return nil, io.EOF
	}
	if _, err := fmt.Fprintf(r.in, "w %d\n", k); err != nil {
		if errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) {
			r.exited = true
			return nil, io.EOF // the workload exited
		}
		return nil, fmt.Errorf("workload: %w", err)
	}
	var w workload.Window
	if err := r.read(&w); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			// The workload exited: its part ends, window k is incomplete.
			r.exited = true
			return nil, io.EOF
		}
		return nil, fmt.Errorf("workload, window %d: %w", k, err)
	}
	if w.Window != k {
		return nil, fmt.Errorf("workload answered for window %d, expected %d", w.Window, k)
	}
	r.last = &w
	return &r.t.Windows[k], nil
}

// Close ends the workload (it exits at the end of its input) and waits for
// it, at most 10 s.
func (r *Replay) Close() error {
	if r.cmd == nil {
		return nil
	}
	fmt.Fprintln(r.in, "q")
	r.in.Close()
	go func() { r.done <- r.cmd.Wait() }()
	var err error
	select {
	case err = <-r.done:
	case <-time.After(10 * time.Second):
		err = errors.New("the workload did not exit 10 s after its input ended")
	}
	r.cmd = nil
	var ee *exec.ExitError
	if errors.As(err, &ee) && r.exited {
		return nil // it ended before the agent: reported as the end of the run
	}
	return err
}

// WorkloadArgv returns the command that runs this program's replay
// workload on the trace file path: `mdk workload replay PATH`.
func WorkloadArgv(path string) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, "workload", "replay", path}, nil
}
