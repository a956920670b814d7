// Package trace owns mdk's page-access trace model (SPEC section 1) and its
// file formats.
//
// A trace is a sequence of windows 0..W-1. Each window lists, per page, the
// events seen in it: accessed (a), born (b) and freed (f). Pages are named by
// their original (space, page) pair, [Page], and are also given dense IDs,
// assigned in order of first appearance, so that engines index arrays instead
// of hash maps. Every [Reader] yields every window in order, empty ones
// included, and announces each page the first time it appears ([Window.New]).
//
// The life/touch/gap semantics of SPEC section 1 are implemented once, by
// [Walker], which every engine except the reference simulator uses.
//
// Formats: the text format of SPEC section 3 ([NewTextReader],
// [NewTextWriter]) and the binary format of docs/trace-format.md.
package trace
