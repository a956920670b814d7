// Package report renders mdk's results for people: publication-quality
// figures of memory performance curves ([WritePlot], with gonum/plot) and one
// self-contained HTML report per trace ([Generate]) that opens offline in a
// browser, with its charts also available as SVG files ([WriteSVGs]).
// It also writes the best-setting table of the text outputs
// ([WriteBestTable]: mdk mpc, the demo, and with a tier's columns mpc
// --tier), the one place that table is formatted.
//
// The report never computes a model number itself: every number in its
// tables is printed from a [result.Result] with the same functions as the
// CSV of `mdk mpc` (SPEC section 6), so table and CSV agree digit for digit.
// Per-window series are down-sampled for display only, keeping
// each bucket's minimum and maximum so no spike disappears. A report may
// also show a [tune.Report] (Data.Tune): its Tuning section prints the
// numbers tune.Run computed, in the words of `mdk tune`.
//
// The HTML, CSS and JavaScript are real files under assets/, embedded with
// go:embed and parsed once; the charting library is ECharts, vendored from
// the npm registry (see assets/README.md for its version and licence).
package report
