package collect

import (
	"io"

	"mdk/importer"
	"mdk/trace"
)

// The lackey log parser is file parsing and lives in package importer (mdk
// import lackey reads saved logs with it); RunExact streams valgrind's live
// log through the same reader. These are its names here.

// LackeyPageSize is the page size of traces made from lackey logs.
const LackeyPageSize = importer.LackeyPageSize

// DefaultWindowInstructions is the default window length of exact traces, in
// executed instructions.
const DefaultWindowInstructions = importer.DefaultWindowInstructions

// LackeyReader is [importer.LackeyReader].
type LackeyReader = importer.LackeyReader

// SyntaxError is [importer.SyntaxError], the reader's error for a bad line.
type SyntaxError = importer.SyntaxError

// NewLackeyReader is [importer.NewLackeyReader].
func NewLackeyReader(r io.Reader, name string, windowInstructions int64) trace.Reader {
	return importer.NewLackeyReader(r, name, windowInstructions)
}
