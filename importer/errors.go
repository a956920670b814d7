package importer

import (
	"errors"
	"fmt"
)

// ErrFormat is wrapped by every [SyntaxError].
var ErrFormat = errors.New("importer: bad input")

// SyntaxError reports malformed input and where it is: a 1-based line number
// for text formats, else a byte offset (in the decompressed stream when the
// input was compressed).
type SyntaxError struct {
	Name   string // file name
	Line   int64  // 1-based line; 0 when the position is a byte offset
	Offset int64  // byte offset, used when Line is 0
	Msg    string // what was wrong and what was expected
	Err    error  // underlying cause, such as io.ErrUnexpectedEOF; may be nil
}

func (e *SyntaxError) Error() string {
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, msg)
	}
	return fmt.Sprintf("%s: byte offset %d: %s", e.Name, e.Offset, msg)
}

// Unwrap returns the cause and [ErrFormat].
func (e *SyntaxError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrFormat, e.Err}
	}
	return []error{ErrFormat}
}

func lineError(name string, line int64, err error, format string, args ...any) *SyntaxError {
	return &SyntaxError{Name: name, Line: line, Msg: fmt.Sprintf(format, args...), Err: err}
}

func offsetError(name string, off int64, err error, format string, args ...any) *SyntaxError {
	return &SyntaxError{Name: name, Offset: off, Msg: fmt.Sprintf(format, args...), Err: err}
}

// OptionError reports options that do not fit the input format, such as a
// format without timestamps and no --window-requests.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }
