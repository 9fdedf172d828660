// Package vint implements Cassandra's variable-length integer encoding
// (utils/vint/VIntCoding.java): the number of leading one bits in the first
// byte says how many bytes follow, so a reader knows the width after one byte.
// Signed values are zig-zag encoded first.
//
// It is hand-written because no Go library implements this exact encoding
// (it is neither protobuf's varint nor a length-prefixed int).
package vint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// MaxLen is the widest encoding: a 0xFF marker and eight value bytes.
const MaxLen = 9

// ErrShort reports that the buffer ends inside a vint.
var ErrShort = errors.New("vint: buffer ends inside a variable-length integer")

// UnsignedSize returns how many bytes EncodeUnsigned writes for v.
func UnsignedSize(v uint64) int {
	// 7 value bits per byte for the first 8 bytes, then a full 9th byte.
	lz := bits.LeadingZeros64(v | 1)
	return (639 - lz*9) >> 6
}

// SignedSize returns how many bytes EncodeSigned writes for v.
func SignedSize(v int64) int { return UnsignedSize(ZigZag(v)) }

// ZigZag maps signed to unsigned so small magnitudes stay small.
func ZigZag(v int64) uint64 { return uint64((v << 1) ^ (v >> 63)) }

// UnZigZag inverts ZigZag.
func UnZigZag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// AppendUnsigned appends the encoding of v to dst.
func AppendUnsigned(dst []byte, v uint64) []byte {
	n := UnsignedSize(v)
	if n == 1 {
		return append(dst, byte(v))
	}
	var buf [MaxLen]byte
	if n == 9 {
		buf[0] = 0xFF
		for i := 1; i < 9; i++ {
			buf[i] = byte(v >> (8 * (8 - i)))
		}
		return append(dst, buf[:9]...)
	}
	for i := n - 1; i >= 0; i-- {
		buf[i] = byte(v)
		v >>= 8
	}
	buf[0] |= ^byte(0xFF >> uint(n-1))
	return append(dst, buf[:n]...)
}

// AppendSigned appends the zig-zag encoding of v to dst.
func AppendSigned(dst []byte, v int64) []byte { return AppendUnsigned(dst, ZigZag(v)) }

// EncodedLen returns the total width of the vint whose first byte is b.
func EncodedLen(b byte) int { return bits.LeadingZeros8(^b) + 1 }

// Unsigned decodes an unsigned vint from the start of b and returns the
// value and the number of bytes read. It never reads past len(b).
func Unsigned(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, ErrShort
	}
	first := b[0]
	if first < 0x80 {
		return uint64(first), 1, nil
	}
	n := EncodedLen(first)
	if len(b) < n {
		return 0, 0, ErrShort
	}
	var v uint64
	if n < 9 {
		v = uint64(first & (0xFF >> uint(n)))
	}
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, nil
}

// Signed decodes a zig-zag vint from the start of b.
func Signed(b []byte) (int64, int, error) {
	u, n, err := Unsigned(b)
	return UnZigZag(u), n, err
}

// Unsigned32 decodes an unsigned vint that Cassandra requires to fit an int
// (lengths, counts); a larger value is corruption, not a big number.
func Unsigned32(b []byte) (uint32, int, error) {
	u, n, err := Unsigned(b)
	if err != nil {
		return 0, n, err
	}
	if u > 0x7FFFFFFF {
		return 0, n, fmt.Errorf("vint: value %d does not fit a 32-bit length", u)
	}
	return uint32(u), n, nil
}

// Load8 reads the unsigned vint at b[pos:] when it takes at most 8 bytes
// and 8 bytes are left, with one load, a shift and a mask; n is 0
// otherwise (then At decides). Small enough to be inlined into the row
// decoder's hot loops.
func Load8(b []byte, pos int) (v uint64, n int) {
	if uint(pos)+8 <= uint(len(b)) {
		x := binary.BigEndian.Uint64(b[pos:])
		// The length is the first byte's leading ones, plus one.
		if n = bits.LeadingZeros64(^x) + 1; n <= 8 {
			return x >> (64 - 8*uint(n)) & (1<<(7*uint(n)) - 1), n
		}
	}
	return 0, 0
}

// At reads the unsigned vint at b[pos:]; n is 0 when b ends inside it.
// Vints of up to 8 bytes are read with one 8-byte load when the buffer
// has that much left.
func At(b []byte, pos int) (v uint64, n int) {
	if pos < 0 || pos >= len(b) {
		return 0, 0
	}
	first := b[pos]
	if first < 0x80 {
		return uint64(first), 1
	}
	n = EncodedLen(first)
	if n <= 8 && len(b)-pos >= 8 {
		// The n bytes big-endian, less the n length bits of the first.
		v = binary.BigEndian.Uint64(b[pos:]) >> uint(64-8*n)
		return v & (1<<uint(7*n) - 1), n
	}
	v, n, err := Unsigned(b[pos:])
	if err != nil {
		return 0, 0
	}
	return v, n
}
