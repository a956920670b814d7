// Package calibrate measures, on the running machine, what moving pages to a
// far tier costs: the CPU time to swap a page out, the latency of touching a
// swapped-out page (a promotion) against a resident one, and the memory the
// tier keeps per page for contents of known compressibility or a live
// process's own pages. Its result is a [tier.Tier], the figures mdk's tier
// model (package tier) applies to curves.
//
// The measurement is real: the package maps anonymous memory in its own
// process, fills it, reclaims it with madvise(MADV_PAGEOUT) onto a swap
// device it created itself (a zram device from /sys/class/zram-control, or
// a swap file) at the highest swap priority, and times every touch that
// brings a page back. It never touches a swap device or zram device it did
// not create, and removes what it created on every path (docs/tiers.md).
// Only Linux is supported; elsewhere [Run] returns an error wrapping
// [linux.ErrNotSupported]. Every kernel file it reads or writes goes
// through package linux.
package calibrate
