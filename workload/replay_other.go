//go:build !linux

package workload

import (
	"fmt"
	"io"

	"mdk/linux"
	"mdk/trace"
)

// Replay returns an error wrapping linux.ErrNotSupported: the replay maps
// and touches pages with Linux's calls.
func Replay(t *trace.Trace, opt Options, in io.Reader, out io.Writer) error {
	return fmt.Errorf("workload: replay: %w", linux.Supported())
}
