//go:build !unix

package trace_test

import "time"

// textCPUTime is not measured on this platform.
func textCPUTime() time.Duration { return 0 }
