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

// Place is the one way a caller says where a decoder's bytes came from.
// Decoders of bare buffers report offsets within the buffer and leave the
// file (and sometimes the component) empty; the caller that knows them
// fills in the file and component where they are empty and moves a known
// offset by base, the buffer's position within the component. Errors that
// are not *Error are returned unchanged, as is nil.
//
// When err is itself an *Error, Place returns a changed copy, so an error
// value a decoder keeps (a sticky error returned on every call) is never
// moved twice. An *Error wrapped deeper in err's chain is changed in place,
// since the chain cannot be rebuilt around a copy: readers of its fields
// (verify, errors.As) see the place, but a message fmt.Errorf already
// rendered around it keeps its text, so a decoder returns the *Error
// itself to a caller that places it.
func Place(err error, file, component string, base int64) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	if c.File == "" {
		c.File = file
	}
	if c.Component == "" {
		c.Component = component
	}
	if c.Offset >= 0 {
		c.Offset += base
	}
	if top, ok := err.(*Error); ok && top == e {
		return &c
	}
	*e = c
	return err
}

// WithFile names the file where err's *Error has none: Place with only a
// file.
func WithFile(err error, file string) error { return Place(err, file, "", 0) }

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
