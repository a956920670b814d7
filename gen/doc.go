// Package gen generates synthetic page-access traces: deterministic for a
// seed, streamed window by window, in memory proportional to the number of
// pages (never to the number of records).
//
// A [Config] names a model and its size; each model has its own parameter
// struct with a documented default ([DefaultZipf], [DefaultScan],
// [DefaultPhases], [DefaultChurn], [DefaultMix]):
//
//   - zipf: pages ranked by popularity (ranks shuffled over page numbers);
//     the top HotFraction are accessed in each window with probability
//     HotProb, rank r beyond them with HotProb*(r0/r)^Exponent, never below
//     ColdProb.
//   - scan: an array of ArrayFraction of the pages swept every Period
//     windows, one slice per window over SweepWindows windows (an iterative
//     graph job), plus a hot set accessed with HotProb in every window.
//   - phases: the working set, a contiguous range of WorkingSetFraction of
//     the pages starting at a random page, moves every PhaseWindows windows;
//     pages in it are accessed with Prob per window, others with
//     BackgroundProb.
//   - churn: pages are born (b, or a when accessed at once) and freed (f)
//     over time, keeping about AliveFraction of them alive with a mean
//     Lifetime in windows; freed page numbers are reused last-freed first,
//     as an allocator would.
//   - mix: the four above side by side, each in its own address space
//     (space 0 zipf, 1 scan, 2 phases, 3 churn), sized by the shares of
//     [MixConfig].
//
// Every random draw comes from math/rand/v2's PCG, one stream per model
// region seeded from Config.Seed, so the same Config gives the same trace on
// every machine. Windows are produced in canonical form (new pages in
// (space, page) order, lists sorted by dense ID), the form the binary
// writer stores, so a generated trace read back from a file is identical,
// IDs included. docs/gen.md describes the models for users.
package gen
