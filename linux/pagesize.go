package linux

import "os"

// pageSize is the kernel's page size, read once.
var pageSize = os.Getpagesize()

// PageSize returns the running kernel's page size in bytes (4096 on
// x86-64; 4096, 16384 or 65536 on arm64): the unit of pagemap's entries,
// of the idle bitmap's frames and of process_madvise's ranges. Every page
// number mdk derives from an address divides by it.
func PageSize() int { return pageSize }
