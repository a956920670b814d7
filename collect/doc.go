// Package collect makes mdk traces from running programs. It owns the parts
// of mdk that depend on the running kernel (the determinism boundary of
// docs/architecture.md):
//
//   - [Recorder] samples live Linux processes with idle page tracking
//     (/proc/PID/maps, /proc/PID/pagemap, /sys/kernel/mm/page_idle/bitmap),
//     the access-bit scan of the MDK paper, one window at a time. It reads
//     the kernel through an [FS] rooted at mount points (--proc, --sys), so
//     it runs on fixtures and in containers.
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
