// Package token turns partition keys into Cassandra tokens and orders keys
// the way a table's partitioner does (dht/IPartitioner and its
// implementations). Statistics.db names the partitioner class; ForName maps
// that name to a Partitioner.
//
// Token is a small value type with no heap pointers for Murmur3 and Random
// tokens, so computing one per partition does not allocate.
package token

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Kind says which partitioner's token space a Token belongs to.
type Kind uint8

const (
	KindInvalid Kind = iota // the zero Token
	KindMurmur3             // signed 64-bit (Murmur3Partitioner.LongToken)
	KindRandom              // 0..2^127, or -1 for the minimum (RandomPartitioner.BigIntegerToken)
	KindBytes               // raw bytes (ByteOrderedPartitioner.BytesToken)
	KindString              // Java string (OrderPreservingPartitioner.StringToken)
)

// Token is one position on the ring. Bytes and String tokens refer to the
// key they were made from rather than copying it; Clone before the key's
// buffer is reused.
//
// Token is 32 bytes, the most the compiler keeps in registers: with a
// plain []byte field (48 bytes) it went through a stack temporary and a
// Murmur3 token through the Partitioner interface took 23ns instead of
// 16.5ns. So Bytes and String tokens keep the data pointer in p and the
// length in lo; p is a real pointer, so the key stays alive.
type Token struct {
	kind   Kind
	hi, lo uint64 // Murmur3: lo holds the int64; Random: the 128-bit magnitude, or randomMinimum; Bytes/String: length
	p      *byte  // Bytes: the bytes; String: the UTF-8 text
}

func bytesKind(kind Kind, b []byte) Token {
	return Token{kind: kind, lo: uint64(len(b)), p: unsafe.SliceData(b)}
}

// randomMinimum marks RandomPartitioner's minimum token -1 (the token of an
// empty key) in hi and lo; no real token's magnitude exceeds 2^127.
const randomMinimum = ^uint64(0)

func (t Token) isRandomMinimum() bool {
	return t.kind == KindRandom && t.hi == randomMinimum && t.lo == randomMinimum
}

// Murmur3Token wraps a Murmur3Partitioner token value.
func Murmur3Token(v int64) Token { return Token{kind: KindMurmur3, lo: uint64(v)} }

// BytesToken wraps a ByteOrderedPartitioner token (the key itself).
func BytesToken(b []byte) Token { return bytesKind(KindBytes, b) }

// StringToken wraps an OrderPreservingPartitioner token.
func StringToken(s string) Token { return bytesKind(KindString, []byte(s)) }

// RandomToken wraps a RandomPartitioner token value; v must be -1 (the
// minimum) or in 0..2^127.
func RandomToken(v *big.Int) (Token, bool) {
	if v.Cmp(big.NewInt(-1)) == 0 {
		return Token{kind: KindRandom, hi: randomMinimum, lo: randomMinimum}, true
	}
	if v.Sign() < 0 || v.Cmp(randomMaximum) > 0 {
		return Token{}, false
	}
	var buf [16]byte
	v.FillBytes(buf[:])
	return Token{kind: KindRandom, hi: binary.BigEndian.Uint64(buf[:8]), lo: binary.BigEndian.Uint64(buf[8:])}, true
}

var randomMaximum = new(big.Int).Lsh(big.NewInt(1), 127)

// Kind reports the token's kind.
func (t Token) Kind() Kind { return t.kind }

// Int64 is the value of a Murmur3 token.
func (t Token) Int64() int64 { return int64(t.lo) }

// BigInt is the value of a Random token (-1 for the minimum).
func (t Token) BigInt() *big.Int {
	if t.isRandomMinimum() {
		return big.NewInt(-1)
	}
	v := new(big.Int).SetUint64(t.hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(t.lo))
}

// Bytes is the content of a Bytes token, or the UTF-8 text of a String token.
func (t Token) Bytes() []byte {
	if t.kind != KindBytes && t.kind != KindString {
		return nil
	}
	return unsafe.Slice(t.p, t.lo)
}

// Clone returns a token that no longer refers to the key it came from.
func (t Token) Clone() Token {
	if t.p != nil {
		return bytesKind(t.kind, bytes.Clone(t.Bytes()))
	}
	return t
}

// String prints the token as Cassandra's token factories do: decimal for
// Murmur3 and Random, lowercase hex for ByteOrdered, the text itself for
// OrderPreserving.
func (t Token) String() string {
	switch t.kind {
	case KindMurmur3:
		return strconv.FormatInt(int64(t.lo), 10)
	case KindRandom:
		return t.BigInt().String()
	case KindBytes:
		return hex.EncodeToString(t.Bytes())
	case KindString:
		return string(t.Bytes())
	}
	return "<invalid token>"
}

// Compare orders two tokens of the same kind (-1, 0, +1). Tokens of
// different kinds order by kind, which only keeps sorting total; Cassandra
// refuses to compare them.
func (t Token) Compare(o Token) int {
	if t.kind != o.kind {
		return cmp.Compare(uint64(t.kind), uint64(o.kind))
	}
	switch t.kind {
	case KindMurmur3:
		a, b := int64(t.lo), int64(o.lo)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	case KindRandom:
		if tm, om := t.isRandomMinimum(), o.isRandomMinimum(); tm || om {
			return cmpBool(om, tm)
		}
		if c := cmp.Compare(t.hi, o.hi); c != 0 {
			return c
		}
		return cmp.Compare(t.lo, o.lo)
	case KindBytes:
		return bytes.Compare(t.Bytes(), o.Bytes())
	case KindString:
		return compareUTF16(t.Bytes(), o.Bytes())
	}
	return 0
}

// Equal reports whether two tokens are the same ring position.
func (t Token) Equal(o Token) bool { return t.Compare(o) == 0 }

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// compareUTF16 orders two valid UTF-8 strings the way Java's
// String.compareTo does, by UTF-16 code units. That differs from code point
// (and UTF-8 byte) order only when a supplementary character, whose first
// unit is a surrogate 0xD800..0xDBFF, meets a character in 0xE000..0xFFFF.
func compareUTF16(a, b []byte) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRune(a)
		rb, nb := utf8.DecodeRune(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return cmp.Compare(uint64(ua), uint64(ub))
			}
			// Same lead surrogate: both are supplementary and the trail
			// units order as the code points do.
			return cmp.Compare(uint64(ra), uint64(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(uint64(len(a)), uint64(len(b)))
}

func firstUnit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	return 0xD800 + (r-0x10000)>>10
}
