//go:build !unix

package gen_test

import "time"

func cpuTime() time.Duration { return 0 }
