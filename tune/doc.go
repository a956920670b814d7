// Package tune owns honest tuning (issue 7): choosing a policy setting on
// one part of the data and reporting what it does on another part it was not
// chosen on.
//
// A [Config] names a service-level objective ([SLO], "max_pr<=2%"), the
// policies to tune (spec strings, or every policy's default grid) and a
// split of the data into a training part and an evaluation part:
//
//   - a window split: each trace cut into training and evaluation windows
//     ([Range], inclusive FIRST..LAST; by default the first floor(W/2)
//     windows train and the rest evaluate);
//   - a trace split: whole traces (several runs of the same job) train, other
//     whole traces evaluate.
//
// Every policy setting runs over every whole trace (one pass of the curve
// generator, package mpc); a part's metrics are the run's per-window arrays
// restricted to the part's windows ([result.Result.Restrict]). So the
// policy's state at a boundary (which pages are resident, how long they have
// been idle) is the one it really has there, not a cold start. A part made
// of several pieces (several traces, or the windows on both sides of a
// training range) pools them: its statistic is computed over the union of
// their windows and its savings are ΣS/ΣL, by concatenating the restricted
// per-window arrays into one [result.Result].
//
// [Run] picks, for each policy, the setting with the most training savings
// whose training statistic meets the SLO (ties: lower statistic, then grid
// order; [result.Best]) and reports its training and evaluation metrics: the
// statistic, the savings, and the windows whose promotion rate exceeds the
// bound. As a yardstick it reports OPP's best setting at the same SLO chosen
// on the evaluation part itself: the oracle's optimum there, not a tuned
// setting. docs/tune.md describes the rules for users.
package tune
