package csr

import (
	"fmt"

	"github.com/pkg/errors"
)

// InputError is a problem with the input itself (as opposed to I/O failures
// or bad options): a malformed token, a wrong number of fields, a bad weight,
// an edge naming an unknown vertex, too many vertices. The CLI maps it to exit
// status 2.
type InputError struct {
	// File is the path of the offending file (or the generator spec).
	File string
	// Line is the 1-based line number in a text file, 0 if not applicable.
	Line int64
	// Offset is the byte offset in a binary file, -1 if not applicable.
	Offset int64
	// Msg says what was wrong and what was expected.
	Msg string
}

func (e *InputError) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("csr: %s:%d: %s", e.File, e.Line, e.Msg)
	case e.Offset >= 0:
		return fmt.Sprintf("csr: %s: byte %d: %s", e.File, e.Offset, e.Msg)
	default:
		return fmt.Sprintf("csr: %s: %s", e.File, e.Msg)
	}
}

// IsInputError reports whether err (or an error it wraps) is an *InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

func lineErr(file string, line int64, format string, args ...any) error {
	return errors.WithStack(&InputError{File: file, Line: line, Offset: -1, Msg: fmt.Sprintf(format, args...)})
}

func offsetErr(file string, off int64, format string, args ...any) error {
	return errors.WithStack(&InputError{File: file, Offset: off, Msg: fmt.Sprintf(format, args...)})
}

func fileErr(file string, format string, args ...any) error {
	return errors.WithStack(&InputError{File: file, Offset: -1, Msg: fmt.Sprintf(format, args...)})
}
