// Package collect makes mdk traces from running programs. It owns the parts
// of mdk that depend on the running kernel (the determinism boundary of
// docs/architecture.md):
//
//   - [Recorder] samples live Linux processes with idle page tracking
//     (/proc/PID/maps, /proc/PID/pagemap, /sys/kernel/mm/page_idle/bitmap),
//     the access-bit scan of the MDK paper, one window at a time. It reads
//     the kernel through an [FS] rooted at mount points (--proc, --sys), so
//     it runs on fixtures and in containers.
//   - [LackeyReader] turns valgrind lackey's --trace-mem=yes log into an
//     exact trace, windows counted in executed instructions, and [RunExact]
//     runs a program under lackey and streams that log through it.
//
// Nothing here keeps global state: a daemon and the `mdk record` command
// share the same code through a context.Context. docs/record.md is the user
// manual and says which parts were exercised on a real kernel.
package collect
