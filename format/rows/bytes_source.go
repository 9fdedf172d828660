package rows

import (
	"fmt"
	"io"
)

// BytesSource is a Source over uncompressed bytes in memory (a partition
// the writer just encoded, a fuzz input, a small uncompressed file).
type BytesSource struct {
	b    []byte
	pos  int
	base int64
}

// NewBytesSource reads b as if it started at Data.db position base.
func NewBytesSource(b []byte, base int64) *BytesSource { return &BytesSource{b: b, base: base} }

func (s *BytesSource) Pos() int64 { return s.base + int64(s.pos) }

func (s *BytesSource) Next(n int) ([]byte, error) {
	if n < 0 || n > len(s.b)-s.pos {
		if s.pos == len(s.b) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%d bytes wanted, %d left: %w", n, len(s.b)-s.pos, io.ErrUnexpectedEOF)
	}
	v := s.b[s.pos : s.pos+n : s.pos+n]
	s.pos += n
	return v, nil
}

func (s *BytesSource) Peek(n int) ([]byte, error) {
	if n > len(s.b)-s.pos {
		return s.b[s.pos:], io.EOF
	}
	return s.b[s.pos : s.pos+n], nil
}

func (s *BytesSource) Skip(n int64) error {
	if n < 0 || n > int64(len(s.b)-s.pos) {
		return fmt.Errorf("skip %d bytes, %d left: %w", n, len(s.b)-s.pos, io.ErrUnexpectedEOF)
	}
	s.pos += int(n)
	return nil
}

// Buffered returns the rest of the bytes; the decoder parses from it directly.
func (s *BytesSource) Buffered() []byte { return s.b[s.pos:] }
