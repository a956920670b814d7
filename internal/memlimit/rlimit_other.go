//go:build !unix

package memlimit

// addressSpaceLimit reports no address-space limit: the systems without
// ulimit -v (Windows) have none to read.
func addressSpaceLimit() (int64, bool) { return 0, false }
