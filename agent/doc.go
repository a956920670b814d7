// Package agent applies a reclamation policy to live Linux processes and
// measures, window by window, what it really saves and costs, beside what
// the model predicts (docs/agent.md is the manual).
//
// One loop wakes once per window. In each window, for all targets together,
// it takes the window's accesses from a [Tracker] (a cooperative replay
// workload that touches a trace's pages on the agent's clock, or a scanner
// of live processes), measures through pagemap what became of the pages it
// reclaimed before (a page found present again is a real promotion, one
// still out a saved page-window), decides with the policy's own
// [policy.Decider], the very code the simulator runs, reclaims the chosen
// pages with process_madvise(MADV_PAGEOUT) ([linux.Process]) within the
// safety limits of [Options], and re-reads pagemap to confirm what went
// out. It writes the trace it observed (trace.mdkt), one [Row] per window
// (measured.csv, and JSON lines), the pages it decided but did not reclaim
// with the cause (skipped.csv), and the run's setting (run.json).
//
// [Compare] runs the simulator on the observed trace with the same setting
// and sets its prediction beside the measurement, every difference
// attributed to its cause.
//
// The agent never signals, pauses or writes to its targets: it reads their
// pagemap and advises the kernel about their pages, nothing else.
package agent
