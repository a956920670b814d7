package linux

import "slices"

// IOVMax is the most iovecs one process_madvise call takes (the kernel's
// UIO_MAXIOV, the IOV_MAX of limits.h); [Process.PageOut] never passes more.
const IOVMax = 1024

// Run is a run of consecutive virtual pages, first .. first+n-1, as one
// iovec of a process_madvise call.
type Run struct {
	First uint64 // virtual page number (address / page size)
	N     uint64 // pages
}

// Runs sorts vpns and merges consecutive page numbers into runs; duplicates
// are dropped. It reuses dst.
func Runs(dst []Run, vpns []uint64) []Run {
	dst = dst[:0]
	slices.Sort(vpns)
	for i, v := range vpns {
		if i > 0 && v == vpns[i-1] {
			continue
		}
		if n := len(dst); n > 0 && dst[n-1].First+dst[n-1].N == v {
			dst[n-1].N++
			continue
		}
		dst = append(dst, Run{First: v, N: 1})
	}
	return dst
}

// PageOutStats is what one [Process.PageOut] did.
type PageOutStats struct {
	Runs     int   // iovecs passed in total
	Syscalls int   // process_madvise calls
	Bytes    int64 // bytes the kernel reported as advised
}
