package bytecomparable

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// maxNesting bounds recursion through nested tuples and collections.
const maxNesting = 64

// UnsupportedError is returned for a type that has no byte-comparable
// form (counters) or one this package does not implement.
type UnsupportedError struct{ Type string }

func (e *UnsupportedError) Error() string {
	return "bytecomparable: type " + e.Type + " has no byte-comparable encoding here"
}

// ValueError is a value whose bytes do not fit its type.
type ValueError struct {
	Type   string
	Reason string
}

func (e *ValueError) Error() string { return "bytecomparable: " + e.Type + " value: " + e.Reason }

func valueErr(t *cqltype.Type, format string, args ...any) error {
	return &ValueError{Type: t.String(), Reason: fmt.Sprintf(format, args...)}
}

// AppendValue appends the byte-comparable form of value v of type t
// (AbstractType.asComparableBytes, OSS50). null is true when the type maps
// the value to no bytes at all ("null source": an empty int, uuid,
// collection, ...); in a sequence that is marked by a separator byte
// instead (NextComponentEmpty in a clustering, NextComponentNull elsewhere).
// A reversed type's bytes are inverted.
func AppendValue(dst []byte, t *cqltype.Type, v []byte) (out []byte, null bool, err error) {
	return appendValue(dst, t, v, 0)
}

func appendValue(dst []byte, t *cqltype.Type, v []byte, depth int) ([]byte, bool, error) {
	if depth > maxNesting {
		return dst, false, valueErr(t, "nested deeper than %d levels", maxNesting)
	}
	start := len(dst)
	out, null, err := appendBase(dst, t, v, depth)
	if err != nil || null {
		return dst, null, err
	}
	if t.Reversed {
		for i := start; i < len(out); i++ {
			out[i] ^= 0xFF
		}
	}
	return out, false, nil
}

func appendBase(dst []byte, t *cqltype.Type, v []byte, depth int) ([]byte, bool, error) {
	switch t.Kind {
	case cqltype.Ascii, cqltype.Text, cqltype.Blob, cqltype.Inet, cqltype.Duration:
		// Byte-ordered types: escaped, never null (an empty value is 00).
		return AppendEscaped(dst, v), false, nil
	case cqltype.Empty:
		return dst, true, nil
	case cqltype.Counter, cqltype.DynamicComposite:
		return dst, false, &UnsupportedError{Type: t.String()}
	}
	if len(v) == 0 {
		return dst, true, nil
	}
	fixed := func(n int) error {
		if len(v) != n {
			return valueErr(t, "%d bytes, expected %d", len(v), n)
		}
		return nil
	}
	switch t.Kind {
	case cqltype.Boolean:
		if v[0] != 0 {
			return append(dst, 1), false, nil
		}
		return append(dst, 0), false, nil
	case cqltype.TinyInt, cqltype.SmallInt, cqltype.Int:
		return AppendSignedFixed(dst, v), false, nil
	case cqltype.Timestamp:
		if err := fixed(8); err != nil {
			return dst, false, err
		}
		if t.Impl() == "DateType" {
			return append(dst, v...), false, nil // the legacy DateType is byte-ordered
		}
		return AppendSignedFixed(dst, v), false, nil
	case cqltype.Date, cqltype.Time:
		return append(dst, v...), false, nil
	case cqltype.Bigint:
		if err := fixed(8); err != nil {
			return dst, false, err
		}
		return AppendVarInt(dst, int64(binary.BigEndian.Uint64(v))), false, nil
	case cqltype.Float, cqltype.Double:
		return AppendFloat(dst, v), false, nil
	case cqltype.Varint:
		return appendInteger(dst, v), false, nil
	case cqltype.Decimal:
		out, err := appendDecimal(dst, t, v)
		return out, false, err
	case cqltype.UUID:
		if err := fixed(16); err != nil {
			return dst, false, err
		}
		msb := binary.BigEndian.Uint64(v)
		version := msb >> 12 & 0xF
		if version == 1 {
			msb = reorderTimestamp(msb)
		} else {
			msb = version<<60 | msb>>4&0x0FFFFFFFFFFFF000 | msb&0xFFF
		}
		dst = binary.BigEndian.AppendUint64(dst, msb)
		return append(dst, v[8:]...), false, nil
	case cqltype.TimeUUID:
		if err := fixed(16); err != nil {
			return dst, false, err
		}
		dst = binary.BigEndian.AppendUint64(dst, reorderTimestamp(binary.BigEndian.Uint64(v)))
		return binary.BigEndian.AppendUint64(dst, binary.BigEndian.Uint64(v[8:])^0x8080808080808080), false, nil
	case cqltype.Custom:
		if t.Impl() == "LexicalUUIDType" {
			if err := fixed(16); err != nil {
				return dst, false, err
			}
			dst = append(dst, v[0]^0x80)
			dst = append(dst, v[1:8]...)
			dst = append(dst, v[8]^0x80)
			return append(dst, v[9:]...), false, nil
		}
		return dst, false, &UnsupportedError{Type: t.String()}
	case cqltype.List, cqltype.Set, cqltype.Map:
		out, err := appendCollection(dst, t, v, depth)
		return out, false, err
	case cqltype.Tuple, cqltype.UDT:
		out, err := appendTuple(dst, t, v, depth)
		return out, false, err
	case cqltype.Vector:
		out, err := appendVector(dst, t, v, depth)
		return out, false, err
	case cqltype.Composite:
		out, err := appendComposite(dst, t, v, depth)
		return out, false, err
	}
	return dst, false, &UnsupportedError{Type: t.String()}
}

// reorderTimestamp moves a version 1 UUID's timestamp to the front, most
// significant part first (TimeUUIDType.reorderTimestampBytes).
func reorderTimestamp(msb uint64) uint64 {
	return msb<<48 | msb<<16&0xFFFF00000000 | msb>>32
}

// component appends one element of a sequence: NextComponent and its
// bytes, or NextComponentNull for a null element or a null source.
func component(dst []byte, t *cqltype.Type, v []byte, isNull bool, depth int) ([]byte, error) {
	if isNull {
		return append(dst, NextComponentNull), nil
	}
	out, null, err := appendValue(append(dst, NextComponent), t, v, depth+1)
	if err != nil {
		return dst, err
	}
	if null {
		return append(dst, NextComponentNull), nil
	}
	return out, nil
}

func readInt32Len(t *cqltype.Type, v []byte, off int) (n int, null bool, err error) {
	if off+4 > len(v) {
		return 0, false, valueErr(t, "ends at byte %d inside an element length", len(v))
	}
	l := int32(binary.BigEndian.Uint32(v[off:]))
	if l < 0 {
		return 0, true, nil
	}
	if int64(off)+4+int64(l) > int64(len(v)) {
		return 0, false, valueErr(t, "element of %d bytes at %d runs past its %d bytes", l, off, len(v))
	}
	return int(l), false, nil
}

// appendCollection encodes a frozen list, set or map: its elements (keys
// and values alternating for a map) as a sequence.
func appendCollection(dst []byte, t *cqltype.Type, v []byte, depth int) ([]byte, error) {
	if len(v) < 4 {
		return dst, valueErr(t, "%d bytes, too short for an element count", len(v))
	}
	count := int32(binary.BigEndian.Uint32(v))
	if count < 0 {
		return dst, valueErr(t, "negative element count %d", count)
	}
	per := 1
	if t.Kind == cqltype.Map {
		per = 2
	}
	off := 4
	for i := 0; i < int(count)*per; i++ {
		n, null, err := readInt32Len(t, v, off)
		if err != nil {
			return dst, err
		}
		off += 4
		if null {
			return dst, valueErr(t, "null element %d", i/per)
		}
		if dst, err = component(dst, t.Params[i%per], v[off:off+n], false, depth); err != nil {
			return dst, err
		}
		off += n
	}
	return append(dst, Terminator), nil
}

// appendTuple encodes a tuple or UDT: its fields without trailing nulls
// (missing fields count as null), null fields as NextComponentNull.
func appendTuple(dst []byte, t *cqltype.Type, v []byte, depth int) ([]byte, error) {
	type field struct {
		v    []byte
		null bool
	}
	fields := make([]field, 0, len(t.Params))
	off := 0
	for i := 0; i < len(t.Params) && off < len(v); i++ {
		n, null, err := readInt32Len(t, v, off)
		if err != nil {
			return dst, err
		}
		off += 4
		fields = append(fields, field{v: v[off : off+n], null: null})
		off += n
	}
	if off < len(v) {
		return dst, valueErr(t, "%d bytes after its %d fields", len(v)-off, len(t.Params))
	}
	for len(fields) > 0 && fields[len(fields)-1].null {
		fields = fields[:len(fields)-1]
	}
	for i, f := range fields {
		var err error
		if dst, err = component(dst, t.Params[i], f.v, f.null, depth); err != nil {
			return dst, err
		}
	}
	return append(dst, Terminator), nil
}

// appendVector encodes a vector's elements: fixed-width ones back to back,
// others each after an unsigned vint length.
func appendVector(dst []byte, t *cqltype.Type, v []byte, depth int) ([]byte, error) {
	if len(t.Params) != 1 {
		return dst, valueErr(t, "vector without an element type")
	}
	et := t.Params[0]
	w := et.FixedLength()
	off := 0
	for i := 0; i < t.Dimension; i++ {
		n := w
		if w < 0 {
			var err error
			if n, off, err = vectorElementLen(t, v, off); err != nil {
				return dst, err
			}
		}
		if off+n > len(v) {
			return dst, valueErr(t, "element %d runs past its %d bytes", i, len(v))
		}
		var err error
		if dst, err = component(dst, et, v[off:off+n], false, depth); err != nil {
			return dst, err
		}
		off += n
	}
	if off != len(v) {
		return dst, valueErr(t, "%d bytes after its %d elements", len(v)-off, t.Dimension)
	}
	return append(dst, Terminator), nil
}

// vectorElementLen reads a variable-width vector element's unsigned vint
// length (Cassandra's vint: leading ones count the extra bytes).
func vectorElementLen(t *cqltype.Type, v []byte, off int) (int, int, error) {
	if off >= len(v) {
		return 0, off, valueErr(t, "ends inside an element length")
	}
	extra := bits.LeadingZeros8(^v[off])
	if off+1+extra > len(v) || extra > 4 {
		return 0, off, valueErr(t, "bad element length at %d", off)
	}
	x := uint64(v[off] & (0xFF >> uint(extra)))
	for i := 1; i <= extra; i++ {
		x = x<<8 | uint64(v[off+i])
	}
	return int(x), off + 1 + extra, nil
}

// appendComposite encodes a CompositeType value: an empty first component
// (null for a static composite), then each component and its
// end-of-component byte as a signed byte.
func appendComposite(dst []byte, t *cqltype.Type, v []byte, depth int) ([]byte, error) {
	off := 0
	if len(v) >= 2 && v[0] == 0xFF && v[1] == 0xFF {
		dst = append(dst, NextComponentNull)
		off = 2
	} else {
		dst = append(dst, NextComponent)
	}
	for i := 0; off < len(v); i++ {
		if i >= len(t.Params) {
			return dst, valueErr(t, "more than its %d components", len(t.Params))
		}
		if off+2 > len(v) {
			return dst, valueErr(t, "ends inside component %d's length", i)
		}
		n := int(binary.BigEndian.Uint16(v[off:]))
		off += 2
		if off+n+1 > len(v) {
			return dst, valueErr(t, "component %d runs past its %d bytes", i, len(v))
		}
		var err error
		if dst, err = component(dst, t.Params[i], v[off:off+n], false, depth); err != nil {
			return dst, err
		}
		off += n
		dst = append(dst, NextComponent, v[off]^0x80)
		off++
	}
	return append(dst, Terminator), nil
}

// appendInteger encodes a varint (IntegerType, OSS50): up to 6 significant
// bytes as a variable-length long, longer ones as a sign byte, the length
// minus 7 as a variable-length unsigned number (inverted for negatives)
// and the significant bytes.
func appendInteger(dst, v []byte) []byte {
	sign := v[0]
	p := 0
	if sign == 0x00 || sign == 0xFF {
		for p+1 < len(v) {
			p++
			if v[p] != sign {
				break
			}
		}
	}
	if len(v)-p < 7 {
		// Fits a long: the bytes before p only repeat the sign.
		w := v
		if len(w) > 8 {
			w = w[len(w)-8:]
		}
		x := int64(int8(w[0]))
		for _, b := range w[1:] {
			x = x<<8 | int64(b)
		}
		return AppendVarInt(dst, x)
	}
	signByte := byte(int8(sign) >> 7)
	dst = append(dst, signByte^0xFF)
	start := len(dst)
	dst = AppendVarUint(dst, uint64(len(v)-p-7))
	for i := start; i < len(dst); i++ {
		dst[i] ^= signByte
	}
	return append(dst, v[p:]...)
}

// AppendBigInt encodes a big integer as a varint value.
func AppendBigInt(dst []byte, x *big.Int) []byte { return appendInteger(dst, cqltype.VarintBytes(x)) }

// fromTwosComplement is new BigInteger(bytes).
func fromTwosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return x
}
