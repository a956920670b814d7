//go:build !linux

package workload

import (
	"errors"
	"io"

	"mdk/trace"
)

// ErrNotSupported is returned by Replay on systems other than Linux.
var ErrNotSupported = errors.New("workload: replay is supported on Linux only")

// Replay returns ErrNotSupported.
func Replay(t *trace.Trace, opt Options, in io.Reader, out io.Writer) error { return ErrNotSupported }
