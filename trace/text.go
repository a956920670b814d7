package trace

import (
	"fmt"
	"math"
)

// Text format limits and constants; the format is described at
// [NewTextReader].
const (
	textMagic   = "mdk-trace"
	textVersion = 1
	maxTextLine = 16 << 20
	maxTextInt  = math.MaxInt32 // largest window number, window count, page size
	// maxLinePages is the number of pages after which the writer starts a new
	// line of the same window and kind, to keep lines readable.
	maxLinePages = 64
)

var textFormat = &Format{
	Name:      "text",
	Exts:      []string{".txt"},
	Magic:     []byte(textMagic + " "),
	NewReader: NewTextReader,
	NewWriter: NewTextWriter,
}

// SyntaxError is a malformed line in a text trace.
type SyntaxError struct {
	File string // name given to the reader
	Line int    // 1-based line number
	Msg  string // what is wrong and what was expected
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }
