package reader

import (
	"errors"
	"strconv"
	"strings"
)

// CorruptError reports bytes on disk that do not match what the format
// requires. It names where the problem is (file, component, byte offset) and
// what the decoder expected there, so a user can look at the bytes
// themselves. Offset is -1 when no position is known.
type CorruptError struct {
	File      string // path of the file, "" when decoding a bare buffer
	Component string // component name such as "Data.db" or "CompressionInfo.db"
	Offset    int64  // byte offset within the component, -1 if unknown
	Expected  string // what the format requires at Offset
	Err       error  // underlying cause, may be nil
}

// Corrupt builds a *CorruptError.
func Corrupt(file, component string, off int64, expected string, err error) *CorruptError {
	return &CorruptError{File: file, Component: component, Offset: off, Expected: expected, Err: err}
}

// Error renders "<file>: <component> at byte <offset>: expected <expected>: <err>",
// leaving out the parts that are empty or unknown.
func (e *CorruptError) Error() string {
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
// and similar checks work through a CorruptError.
func (e *CorruptError) Unwrap() error { return e.Err }

// ErrChecksum is wrapped by every CorruptError that reports a checksum
// mismatch, so callers can tell "the bytes changed on disk" apart from
// "the bytes do not parse" with errors.Is.
var ErrChecksum = errors.New("checksum mismatch")
