// Package policy owns mdk's reclamation policies (SPEC section 2) and the
// policy spec language of the command line (SPEC section 5).
//
// A [Setting] is one policy with every parameter fixed. The reference
// simulator asks it, at the end of every window and for every resident page,
// whether to reclaim the page now ([Decider.Reclaim]). Parameters are counted
// in windows; [Parse] converts durations by the trace's window length.
package policy
