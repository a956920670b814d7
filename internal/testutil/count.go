package testutil

import "testing"

// Count returns n, or n/10 (at least 1) under -short: the race pass of
// .ci/run runs the randomized equality tests with fewer traces, the plain
// pass with all of them.
func Count(n int) int {
	if testing.Short() {
		return max(1, n/10)
	}
	return n
}
