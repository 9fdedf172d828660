package split

import (
	"fmt"
	"strings"

	"github.com/sstabletool/sstabletool/format/token"
)

// TokenRange is a range of tokens as Cassandra's Range is: (Left, Right],
// left-exclusive and right-inclusive, wrapping around the ring when Left
// is not below Right (Left equal to Right is the whole ring, Right the
// minimum token runs to the end of the ring).
type TokenRange struct {
	Left, Right token.Token
}

// ParseTokenRange reads "LEFT,RIGHT", each token as the partitioner
// prints it (Murmur3: a signed decimal; Random: a decimal; ByteOrdered:
// hex; OrderPreserving: the string).
func ParseTokenRange(p token.Partitioner, s string) (TokenRange, error) {
	l, r, ok := strings.Cut(s, ",")
	if !ok {
		return TokenRange{}, fmt.Errorf("token range %q: expected LEFT,RIGHT (the tokens in (LEFT, RIGHT], as Cassandra's ranges are)", s)
	}
	left, err := p.ParseToken(strings.TrimSpace(l))
	if err != nil {
		return TokenRange{}, fmt.Errorf("token range %q: %w", s, err)
	}
	right, err := p.ParseToken(strings.TrimSpace(r))
	if err != nil {
		return TokenRange{}, fmt.Errorf("token range %q: %w", s, err)
	}
	return TokenRange{left, right}, nil
}

// Contains is Range.contains(left, right, point).
func (r TokenRange) Contains(p token.Partitioner, t token.Token) bool {
	c := p.Compare(r.Left, r.Right)
	switch {
	case c < 0:
		return p.Compare(t, r.Left) > 0 && p.Compare(t, r.Right) <= 0
	case c == 0:
		return true
	}
	return p.Compare(t, r.Left) > 0 || p.Compare(t, r.Right) <= 0
}

func (r TokenRange) String() string { return "(" + r.Left.String() + "," + r.Right.String() + "]" }

// Selection picks partitions by key (the keys as stored: a composite
// key's serialized form) and by token.
type Selection struct {
	Keys   map[string]bool
	Ranges []TokenRange
}

// Empty reports whether the selection picks nothing at all.
func (s *Selection) Empty() bool { return s == nil || len(s.Keys) == 0 && len(s.Ranges) == 0 }

func (s *Selection) matches(p token.Partitioner, key []byte, tok func() token.Token) bool {
	if s.Empty() {
		return false
	}
	if s.Keys[string(key)] {
		return true
	}
	if len(s.Ranges) > 0 {
		t := tok()
		for _, r := range s.Ranges {
			if r.Contains(p, t) {
				return true
			}
		}
	}
	return false
}

// Filter says which partitions a rewrite writes: those Keep picks (every
// one when Keep is empty) that Drop does not pick.
type Filter struct {
	Keep, Drop *Selection
}

// writes is the filter's decision for one partition; matched says whether
// it was named by key, for the report of keys not found.
func (f *Filter) writes(p token.Partitioner, key []byte) (write, named bool) {
	if f == nil {
		return true, false
	}
	var t token.Token
	have := false
	tok := func() token.Token {
		if !have {
			t, have = p.Token(key), true
		}
		return t
	}
	named = f.Keep != nil && f.Keep.Keys[string(key)] || f.Drop != nil && f.Drop.Keys[string(key)]
	write = (f.Keep.Empty() || f.Keep.matches(p, key, tok)) && !f.Drop.matches(p, key, tok)
	return write, named
}
