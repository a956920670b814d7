//go:build !unix

package verify

import "time"

// cpu is 0 where getrusage is missing: the table's CPU columns read 0.
func cpu() time.Duration { return 0 }
