// Package linux owns every file and system call of the running kernel that
// mdk reads or writes, in the manner of prometheus/procfs: one file per
// kernel interface, each with a typed parser, all rooted at a configurable
// procfs and sysfs mount point ([FS]) so that a test's fake kernel is a
// directory. It imports nothing of mdk.
//
// The interfaces, one file each:
//
//   - pagemap.go: /proc/PID/pagemap ([Pagemap]);
//   - kpageflags.go: /proc/kpageflags and /proc/kpagecount ([PageFlags],
//     [Refusal]);
//   - idle.go: /sys/kernel/mm/page_idle/bitmap ([BitmapFile]) and the
//     multi-generational LRU switch;
//   - damon.go: DAMON's sysfs tree /sys/kernel/mm/damon/admin ([Kdamond],
//     [DamonSession]);
//   - swaps.go: /proc/swaps, through prometheus/procfs ([Swap]);
//   - zram.go: /sys/block/zramN/mm_stat and the zram-control files
//     ([ZramStat]);
//   - psi.go: /proc/pressure/memory, through prometheus/procfs;
//   - vmstat.go: /proc/vmstat and a cgroup's memory.stat ([KeyValues]),
//     /proc/meminfo and /proc/PID/stat through prometheus/procfs;
//   - maps.go: /proc/PID/maps ([Mapping]);
//   - cgroup.go: a cgroup's cgroup.procs;
//   - process_linux.go: pidfd_open and process_madvise ([Process]).
//
// Errors match one of the Err values of this package with errors.Is, on
// every platform: what does not exist there is [ErrNotSupported], decided
// once per process by cached feature probes ([Probe]). The page size is
// the kernel's ([PageSize]), never a constant.
package linux
