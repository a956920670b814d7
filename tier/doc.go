// Package tier turns mdk's units (saved page-windows, promotions) into an
// operator's: the bytes a setting frees net of what the far tier itself keeps
// in memory, and the time the job stalls on promotions.
//
// A [Tier] holds the figures of one far tier: the latency of a promotion (a
// swap-in fault, or a far access and migration back), the CPU of a demotion,
// and the local memory the tier uses per page it holds (zram's compressed
// copy; nothing for an SSD or a far NUMA node). The figures come from a tier
// file written by `mdk calibrate` on a real machine, or from one of the
// [Builtin] tiers, each with its source. [Tier.Cost] applies them to a
// result; docs/tiers.md has the model, its assumptions and the measured
// figures.
//
// An [Axis] is what an x axis, a target or an SLO is on, and says which of
// two kinds it is: a promotion-rate statistic of the result, or a tier
// metric (the slowdown of [Tier.Cost]), which needs a tier; every decision
// that depends on the kind is a method of Axis. [FormatPercent],
// [FormatBytes], [FormatSeconds] and [FormatNs] are the units tier numbers
// are printed in.
//
// This package reads no clock and touches no kernel file: the figures are
// data, and the same result and tier give the same numbers everywhere.
// Measuring a tier is `mdk calibrate` (package calibrate).
package tier
