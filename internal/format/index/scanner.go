package index

import (
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/reader"
)

// Scanner walks Index.db entry by entry through a sliding window, so a huge
// Index.db (or one huge promoted index) never has to fit in memory when
// only keys and positions are wanted.
type Scanner struct {
	codec    *Codec
	f        reader.File
	full     bool // decode promoted indexes too
	window   []byte
	winStart int64 // file offset of window[0]
	pos      int64 // file offset of the next entry
	entry    Entry
	entryPos int64
	err      error
	mapped   []byte
	// windowSize is how much a refill reads: small for a lookup, which
	// reads a few entries, minWindow once a scan has refilled twice.
	windowSize int
	refills    int
}

const minWindow = 64 << 10

// NewScanner returns a scanner starting at file offset start. With full
// set, Entry() includes the promoted index's blocks.
func NewScanner(f reader.File, codec *Codec, start int64, full bool) *Scanner {
	s := &Scanner{codec: codec, f: f, full: full, pos: start, winStart: start, windowSize: 4 << 10}
	if m, ok := f.(reader.Mapped); ok {
		s.mapped = m.Bytes()
	}
	return s
}

func (s *Scanner) corrupt(off int64, expected string, err error) error {
	return corrupt.New(s.f.Path(), "Index.db", off, expected, err)
}

// Next advances to the next entry; it returns false at the end or on error.
func (s *Scanner) Next() bool {
	if s.err != nil || s.pos >= s.f.Size() {
		return false
	}
	if s.pos < 0 {
		// A start from a damaged Summary.db sample.
		s.err = s.corrupt(s.pos, "an entry at a position inside the file", fmt.Errorf("position %d is negative", s.pos))
		return false
	}
	want := 0
	for {
		b, err := s.bytesAt(s.pos, want)
		if err != nil {
			s.err = err
			return false
		}
		var n int
		if s.full {
			n, err = s.codec.Decode(b, &s.entry)
		} else {
			var total int
			_, total, err = s.codec.DecodeHead(b, &s.entry)
			n = total
		}
		if err == nil {
			if s.pos+int64(n) > s.f.Size() {
				s.err = s.corrupt(s.pos, fmt.Sprintf("an index entry of %d bytes inside the file", n), io.ErrUnexpectedEOF)
				return false
			}
			s.entryPos = s.pos
			s.pos += int64(n)
			return true
		}
		if !errors.Is(err, ErrShort) {
			if _, ok := corrupt.As(err); ok {
				s.err = corrupt.Place(err, s.f.Path(), "", s.pos)
			} else {
				s.err = s.corrupt(s.pos, "an index entry", err)
			}
			return false
		}
		if int64(len(b)) >= s.f.Size()-s.pos {
			s.err = s.corrupt(s.pos, "a complete index entry", io.ErrUnexpectedEOF)
			return false
		}
		want = max(2*len(b), minWindow)
	}
}

// bytesAt returns at least min(want, rest of file) bytes from off.
func (s *Scanner) bytesAt(off int64, want int) ([]byte, error) {
	if s.mapped != nil {
		return s.mapped[off:], nil
	}
	rest := s.f.Size() - off
	if int64(want) > rest {
		want = int(rest)
	}
	// Serve from the window whatever it holds past off: an entry that does
	// not fit fails with ErrShort and the caller asks again with a want.
	end := s.winStart + int64(len(s.window))
	if off >= s.winStart && off < end && off+int64(want) <= end {
		return s.window[off-s.winStart:], nil
	}
	size := max(want, s.windowSize)
	if int64(size) > rest {
		size = int(rest)
	}
	if s.refills++; s.refills > 2 {
		s.windowSize = minWindow
	}
	if cap(s.window) < size {
		s.window = make([]byte, size)
	}
	s.window = s.window[:size]
	if _, err := s.f.ReadAt(s.window, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, s.corrupt(off, "readable bytes", err)
	}
	s.winStart = off
	return s.window, nil
}

// Entry returns the current entry; its slices are valid until Next.
func (s *Scanner) Entry() *Entry { return &s.entry }

// EntryPos returns the Index.db offset of the current entry.
func (s *Scanner) EntryPos() int64 { return s.entryPos }

// Pos returns the offset of the next entry.
func (s *Scanner) Pos() int64 { return s.pos }

// Err returns the error that stopped the scan, if any.
func (s *Scanner) Err() error { return s.err }

// DecodeFull decodes the current entry with its promoted index, for a
// scanner that walks keys only: a lookup skips the entries it passes and
// decodes just the one it finds.
func (s *Scanner) DecodeFull() (*Entry, error) {
	size := int(s.pos - s.entryPos)
	b, err := s.bytesAt(s.entryPos, size)
	if err != nil {
		return nil, err
	}
	var e Entry
	if _, err := s.codec.Decode(b[:size], &e); err != nil {
		if _, ok := corrupt.As(err); ok {
			return nil, corrupt.Place(err, s.f.Path(), "", s.entryPos)
		}
		return nil, s.corrupt(s.entryPos, "an index entry", err)
	}
	return &e, nil
}
