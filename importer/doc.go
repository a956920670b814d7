// Package importer converts traces that other tools produce into mdk traces
// (SPEC section 1): libCacheSim CSV/TXT and oracleGeneral files, block and
// address traces, packed LBN arrays, and DAMON recordings.
//
// Every importer has two layers. A format-specific scanner reads the input
// one record at a time and reports malformed input with the file name and
// the line number (text) or byte offset (binary) and what was expected. A
// shared pipeline then maps each record to the pages it touches
// ([Mapping]), to a window ([Options.Window] or [Options.WindowRequests]),
// and feeds the (window, page) pairs to a [Windower], which writes
// [trace.Window] values in order to a [trace.Writer].
//
// Importers stream: memory is proportional to the number of distinct pages,
// not to the number of records. The one exception is the DAMON JSON format,
// whose (small, region-level) snapshots are held in memory so that several
// monitoring targets can be merged in time order.
//
// Compressed input (gzip, xz, zstd, bzip2; and zlib for DAMON files) is
// recognised by its magic bytes and decompressed on the fly.
//
// docs/import.md documents every mapping choice.
package importer
