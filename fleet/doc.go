// Package fleet runs mdk's engines over many traces (a fleet of jobs) and
// combines the results into the fleet view of docs/fleet.md: per policy
// setting, the fleet's saved bytes over its footprint and the share of jobs
// that break the SLO; per policy at the SLO, the fleet's savings when every
// job gets its own tuned setting, one setting for all, and OPP per job (the
// headroom); and a per-job table.
//
// The package owns three pieces, kept apart so that a distributed engine can
// run them (package fleet/beam runs them on Apache Beam):
//
//   - [Plan.Run]: one job, one trace, one pass of the curve generator (mpc)
//     over every requested setting plus tune's OPP yardstick, and each
//     controller (auto:...) run over the trace by the simulator
//     (sim.RunControlled); the result is a small serialisable [JobResult]
//     (JSON), never one element per record.
//   - [Plan.Accs] and [Acc.Merge]: the job's contribution to every fleet key
//     (one per setting and controller, one per tuned policy, one for OPP) and their
//     combination. Merging only adds integers and exact rationals
//     (math/big.Rat), so it is associative and commutative: any grouping, in
//     any order, on any number of workers gives the same bits.
//   - [Plan.Build]: the fleet view from the merged accumulators and the job
//     results, and [Fleet.WriteDir] its files.
//
// [RunLocal] runs the three with goroutines on one machine. Nothing here
// imports Beam.
package fleet
