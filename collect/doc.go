// Package collect makes mdk traces from running programs, and nothing else:
// the kernel's files and calls it uses are package linux's.
//
//   - [Recorder] samples live Linux processes with idle page tracking
//     (/proc/PID/maps, /proc/PID/pagemap, /sys/kernel/mm/page_idle/bitmap),
//     the access-bit scan of the MDK paper, one window at a time, or with
//     DAMON. It reads the kernel through a linux.FS rooted at mount points
//     (--proc, --sys), so it runs on fixtures and in containers. Its files:
//     recorder.go (the type, its set-up), run.go (mdk record's window
//     clock), scan.go (one scan), idlebits.go (the idle bitmap's read-back
//     and marking), compare.go (two scans into a window), physical.go
//     (page frames as pages), damon.go (the DAMON tracker), options.go.
//   - [RunExact] traces a program exactly under valgrind, windows counted in
//     executed instructions: with mdk's own valgrind tool (tool/mdkpages.c,
//     built by [BuildPageTool]), whose per-window page sets
//     [PageToolReader] reads, or with valgrind's lackey, whose
//     --trace-mem=yes log [LackeyReader] turns into the same trace.
//
// Nothing here keeps global state: a daemon and the `mdk record` command
// share the same code through a context.Context. docs/record.md is the user
// manual and says which parts were exercised on a real kernel.
package collect
