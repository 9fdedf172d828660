// Package bytecomparable translates Cassandra values to and from their
// byte-comparable form, version OSS50 (utils/bytecomparable/ByteSource.java,
// ByteComparable.md, and each AbstractType's asComparableBytes): byte
// strings whose unsigned lexicographic order is the order of the typed
// values. The BTI index tries (package bti) are keyed by these bytes:
// Partitions.db by decorated partition keys, Rows.db by clustering prefixes.
//
// Sequences of values (clustering prefixes, tuples, collections, decorated
// keys) put a separator byte before each component and a terminator after
// the last, and escape the zero bytes of variable-length values, so that no
// encoding is a prefix of another.
package bytecomparable

import (
	"encoding/binary"
	"math/bits"
)

// Separator and terminator bytes of multi-component sequences.
const (
	Escape       = 0x00 // ends an escaped value; a zero byte in it is escaped
	Escaped0Cont = 0xFE // after Escape: another zero follows
	Escaped0Done = 0xFF // after Escape: the run of zeros is over

	NextComponent              = 0x40 // before each present component
	NextComponentEmpty         = 0x3F // a clustering value encoded as nothing (an empty int, ...)
	NextComponentEmptyReversed = 0x41 // the same for a reversed (DESC) clustering column
	NextComponentNull          = 0x3E // a null component

	Terminator      = 0x38 // ends a complete sequence (a Clustering, a tuple, a decorated key)
	LTNextComponent = 0x20 // ends a bound that sorts before its extensions (inclusive start, exclusive end)
	GTNextComponent = 0x60 // ends a bound that sorts after its extensions (exclusive start, inclusive end)
	Excluded        = 0x18 // the static clustering

	minSeparator = 0x10
	maxSeparator = 0xEF
)

// AppendEscaped appends the weakly prefix-free form of a byte-ordered value
// (ByteSource.of: text, ascii, blob, inet, duration, partition key bytes):
// a zero byte becomes 00 FF, a run of n zeros 00 FE..FE FF, and the value
// ends with 00, or with FE in place of its last FF when it ends in zeros.
func AppendEscaped(dst, v []byte) []byte {
	escaped := false
	for _, b := range v {
		if !escaped {
			dst = append(dst, b)
			escaped = b == Escape
			continue
		}
		if b == Escape {
			dst = append(dst, Escaped0Cont)
			continue
		}
		dst = append(dst, Escaped0Done, b)
		escaped = false
	}
	if escaped {
		return append(dst, Escaped0Cont)
	}
	return append(dst, Escape)
}

// AppendSignedFixed appends a fixed-length two's complement number with
// its sign bit flipped (ByteSource.signedFixedLengthNumber).
func AppendSignedFixed(dst, v []byte) []byte {
	if len(v) == 0 {
		return dst
	}
	dst = append(dst, v[0]^0x80)
	return append(dst, v[1:]...)
}

// AppendInt64 appends a long as 8 big-endian bytes with the sign flipped
// (ByteSource.of(long): the Murmur3 token).
func AppendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

// AppendFloat appends an IEEE float or double: positives with the sign bit
// set, negatives with every bit flipped (ByteSource.signedFixedLengthFloat).
func AppendFloat(dst, v []byte) []byte {
	if len(v) == 0 {
		return dst
	}
	var x byte
	if v[0]&0x80 != 0 {
		x = 0xFF
	}
	dst = append(dst, (v[0]|0x80)^x)
	for _, b := range v[1:] {
		dst = append(dst, b^x)
	}
	return dst
}

// AppendVarInt appends a signed long in the variable-length form
// (ByteSource.variableLengthInteger, bigint): the first bit is the
// inverted sign, then as many bits equal to it as extra bytes follow.
func AppendVarInt(dst []byte, v int64) []byte {
	neg := uint64(v >> 63) // all ones for negative numbers
	u := uint64(v) ^ neg
	n := (64-bits.LeadingZeros64(u|1))/7 + 1
	if n >= 9 {
		first := byte(0xFF)
		if neg != 0 {
			first = 0
		}
		return binary.BigEndian.AppendUint64(append(dst, first), (u|1<<63)^neg)
	}
	mask := uint64(byte(int32(-0x100) >> n))
	u |= mask << (n*8 - 8)
	u ^= neg
	for s := n*8 - 8; s >= 0; s -= 8 {
		dst = append(dst, byte(u>>uint(s)))
	}
	return dst
}

// AppendVarUint appends an unsigned number in the UTF-8-like form
// (ByteSource.VariableLengthUnsignedInteger): as many leading ones in the
// first byte as extra bytes follow.
func AppendVarUint(dst []byte, v uint64) []byte {
	extra := (63 - bits.LeadingZeros64(v|1)) / 7
	mask := uint64(int64(int32(-256) >> uint(extra)))
	pos := uint(extra * 8)
	dst = append(dst, byte(v>>(pos&63)|mask))
	for pos >= 8 {
		pos -= 8
		dst = append(dst, byte(v>>(pos&63)))
	}
	return dst
}
