// Package stats summarises a trace: the numbers `mdk stats` prints.
//
// [Compute] streams a trace once through a [trace.Walker], so the lives,
// touches and gaps it counts are exactly those of SPEC section 1 (the walker
// owns those semantics; this package only tallies). Memory use is one int64
// per window (for the median of |A_w|) plus the walker's 16 bytes per page.
//
// Definitions, where SPEC is silent:
//
//   - The median of |A_w| over the W windows is the lower median: the value
//     at index (W-1)/2 of the sorted sizes, so it is always one of them.
//   - Gap lengths g are bucketed as 0, 1, 2, 3-4, 5-8, 9-16, ...: bucket 0
//     holds g = 0, and bucket b >= 1 holds 2^(b-2) < g <= 2^(b-1). Closed
//     and open gaps have separate histograms over the same buckets, from 0
//     up to the highest bucket either of them uses (empty buckets in between
//     are listed with count 0).
//   - On a read error, the statistics describe the intact prefix of
//     windows: lives still alive end with the prefix (e = windows read).
package stats
