// Package corrupt is the one error type for bytes on disk that do not match
// the format: every decoder, from the chunk reader up to the row decoder
// and the index tries, reports *Error, naming the file, the component, the
// byte offset and what was expected there. It sits below every other
// package (it imports only the standard library), so a decoder that needs
// nothing else from the file layer does not depend on it.
package corrupt

import (
	"errors"
	"strconv"
	"strings"
)

// Error reports bytes on disk that do not match what the format
// requires. It names where the problem is (file, component, byte offset) and
// what the decoder expected there, so a user can look at the bytes
// themselves. Offset is -1 when no position is known.
type Error struct {
	File      string // path of the file, "" when decoding a bare buffer
	Component string // component name such as "Data.db" or "CompressionInfo.db"
	Offset    int64  // byte offset within the component, -1 if unknown
	Expected  string // what the format requires at Offset
	Err       error  // underlying cause, may be nil
}

// New builds an *Error.
func New(file, component string, off int64, expected string, err error) *Error {
	return &Error{File: file, Component: component, Offset: off, Expected: expected, Err: err}
}

// WithFile names the file in the first *Error of err's chain that has no
// file yet (decoders of bare buffers leave it empty), and returns err. It
// is the one way a caller attaches the path.
func WithFile(err error, file string) error {
	var e *Error
	if errors.As(err, &e) && e.File == "" {
		e.File = file
	}
	return err
}

// As returns the first *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Error renders "<file>: <component> at byte <offset>: expected <expected>: <err>",
// leaving out the parts that are empty or unknown.
func (e *Error) Error() string {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
	}
	if e.File != "" {
		b.WriteString(e.File)
	}
	if e.Component != "" || e.Offset >= 0 {
		sep()
		if e.Component != "" {
			b.WriteString(e.Component)
			if e.Offset >= 0 {
				b.WriteByte(' ')
			}
		}
		if e.Offset >= 0 {
			b.WriteString("at byte ")
			b.WriteString(strconv.FormatInt(e.Offset, 10))
		}
	}
	if e.Expected != "" {
		sep()
		b.WriteString("expected ")
		b.WriteString(e.Expected)
	}
	if e.Err != nil {
		sep()
		b.WriteString(e.Err.Error())
	}
	if b.Len() == 0 {
		return "corrupt sstable"
	}
	return b.String()
}

// Unwrap returns the underlying cause so errors.Is(err, io.ErrUnexpectedEOF)
// and similar checks work through an Error.
func (e *Error) Unwrap() error { return e.Err }

// ErrChecksum is wrapped by every Error that reports a checksum
// mismatch, so callers can tell "the bytes changed on disk" apart from
// "the bytes do not parse" with errors.Is.
var ErrChecksum = errors.New("checksum mismatch")
