package bytecomparable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/bits"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format/cqltype"
)

// Component names the encoding in decoding errors (*corrupt.Error,
// whose Offset is then the byte offset within the encoding).
const Component = "byte-comparable encoding"

// errTruncated marks input that ends inside a value. Decoding whole
// encodings reports it as corruption; decoding a separator (a prefix of an
// encoding) stops there.
var errTruncated = errors.New("bytecomparable: encoding ends inside a value")

// decoder reads an encoding from the front. tolerant decoders accept input
// that stops anywhere: index separators are prefixes of encodings.
type decoder struct {
	b        []byte
	pos      int
	tolerant bool
}

func (d *decoder) errorf(format string, args ...any) error {
	return corrupt.New("", Component, int64(d.pos), fmt.Sprintf(format, args...), nil)
}

func (d *decoder) end(what string) error {
	if d.tolerant {
		return errTruncated
	}
	return corrupt.New("", Component, int64(d.pos), what, errTruncated)
}

func (d *decoder) peek() int {
	if d.pos < len(d.b) {
		return int(d.b[d.pos])
	}
	return -1
}

func (d *decoder) byte(what string) (byte, error) {
	if d.pos >= len(d.b) {
		return 0, d.end(what)
	}
	d.pos++
	return d.b[d.pos-1], nil
}

func (d *decoder) expect(c byte, what string) error {
	if d.pos >= len(d.b) {
		return d.end(what)
	}
	if d.b[d.pos] != c {
		return d.errorf("%s, found 0x%02x", what, d.b[d.pos])
	}
	d.pos++
	return nil
}

func (d *decoder) take(n int, what string) ([]byte, error) {
	if len(d.b)-d.pos < n {
		return nil, d.end(what)
	}
	d.pos += n
	return d.b[d.pos-n : d.pos], nil
}

// unescape reads an escaped value (ByteSourceInverse.unescape): it ends at
// an Escape byte followed by a separator or by the end of the input. On
// truncated input a tolerant decoder returns what it read with errTruncated.
func (d *decoder) unescape() ([]byte, error) {
	out := []byte{}
	for {
		if d.pos >= len(d.b) {
			return out, d.end("an escaped value ending in 0x00")
		}
		c := d.b[d.pos]
		d.pos++
		if c != Escape {
			out = append(out, c)
			continue
		}
		for {
			n := d.peek()
			switch {
			case n < 0:
				return out, nil
			case n == Escaped0Done:
				d.pos++
				out = append(out, 0)
			case n == Escaped0Cont:
				d.pos++
				out = append(out, 0)
				continue
			case n < minSeparator || n > maxSeparator:
				return out, d.errorf("a separator (0x10..0xef) or 0xfe/0xff after an escape byte, found 0x%02x", n)
			default:
				return out, nil
			}
			break
		}
	}
}

// varInt reads a variable-length signed long
// (ByteSourceInverse.getVariableLengthInteger).
func (d *decoder) varInt() (int64, error) {
	first, err := d.byte("a variable-length integer")
	if err != nil {
		return 0, err
	}
	sm := int(first)
	same := func(a, b int) bool { return (a^b)&0x80 == 0 }
	var sum uint64
	n := 0
	for ; n < 7 && same(sm<<(n+1), sm); n++ {
		c, err := d.byte("a variable-length integer's next byte")
		if err != nil {
			return 0, err
		}
		sum = sum<<8 | uint64(c)
	}
	if n == 7 && same(int(sum>>48), sm) {
		c, err := d.byte("a variable-length integer's ninth byte")
		if err != nil {
			return 0, err
		}
		return int64((sum<<8 | uint64(c)) ^ 1<<63), nil
	}
	sum |= uint64(sm) << (uint(n) * 8)
	signMask := uint64(int64(-0x40) << (uint(n) * 7))
	sign := uint64(int64(int8(byte(sm)^0x80)) >> 7)
	return int64(sum&^signMask | sign&signMask), nil
}

// varUintXor reads a variable-length unsigned number whose bytes were
// xored with x (ByteSourceInverse.getVariableLengthUnsignedIntegerXoring).
func (d *decoder) varUintXor(x byte) (uint64, error) {
	first, err := d.byte("a variable-length length")
	if err != nil {
		return 0, err
	}
	sm := int(first ^ x)
	var sum uint64
	n := 0
	for ; n <= 7 && (sm<<n)&0x80 != 0; n++ {
		c, err := d.byte("a variable-length length's next byte")
		if err != nil {
			return 0, err
		}
		sum = sum<<8 | uint64(c^x)
	}
	sm &^= -256 >> n
	return sum | uint64(sm)<<(uint(n)*8), nil
}

// integer reads a varint and returns its two's complement bytes
// (IntegerType.fromComparableBytes).
func (d *decoder) integer() ([]byte, error) {
	first := d.peek()
	if first < 0 {
		return nil, d.end("a varint")
	}
	sign := byte(first) ^ 0xFF
	if sign != 0xFF && sign != 0x00 {
		v, err := d.varInt()
		if err != nil {
			return nil, err
		}
		n := (64 - bits.LeadingZeros64(uint64(v^v>>63)) + 8) / 8
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(v))
		return append([]byte(nil), b[8-n:]...), nil
	}
	d.pos++
	l, err := d.varUintXor(sign)
	if err != nil {
		return nil, err
	}
	if l > uint64(len(d.b)) {
		return nil, d.errorf("a varint length within the encoding, found %d", l+7)
	}
	n := int(l) + 7
	digits, err := d.take(n, fmt.Sprintf("%d varint bytes", n))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, n+1)
	if digits[0]&0x80 != sign&0x80 {
		out = append(out, sign)
	}
	return append(out, digits...), nil
}

// value decodes one value of type t (AbstractType.fromComparableBytes) and
// returns it in its serialized form.
func (d *decoder) value(t *cqltype.Type, depth int) ([]byte, error) {
	if depth > maxNesting {
		return nil, d.errorf("values nested at most %d levels deep", maxNesting)
	}
	if !t.Reversed {
		return d.base(t, depth)
	}
	// A reversed value is its type's encoding inverted: decode an inverted
	// copy. Separators stay within 0x10..0xef when inverted, so the end
	// of the value is still recognised.
	rest := make([]byte, len(d.b)-d.pos)
	for i, c := range d.b[d.pos:] {
		rest[i] = c ^ 0xFF
	}
	sub := decoder{b: rest, tolerant: d.tolerant}
	v, err := sub.base(t, depth)
	d.pos += sub.pos
	return v, corrupt.Place(err, "", "", int64(d.pos-sub.pos))
}

func (d *decoder) base(t *cqltype.Type, depth int) ([]byte, error) {
	signedFixed := func(n int) ([]byte, error) {
		b, err := d.take(n, fmt.Sprintf("a %d-byte %s", n, t.Kind))
		if err != nil {
			return nil, err
		}
		out := append([]byte(nil), b...)
		out[0] ^= 0x80
		return out, nil
	}
	rawFixed := func(n int) ([]byte, error) {
		b, err := d.take(n, fmt.Sprintf("a %d-byte %s", n, t.Kind))
		return append([]byte(nil), b...), err
	}
	switch t.Kind {
	case cqltype.Ascii, cqltype.Text, cqltype.Blob, cqltype.Inet, cqltype.Duration:
		return d.unescape()
	case cqltype.Boolean:
		b, err := d.byte("a boolean byte")
		if err != nil {
			return nil, err
		}
		if b > 1 {
			return nil, d.errorf("a boolean byte 0 or 1, found 0x%02x", b)
		}
		return []byte{b}, nil
	case cqltype.TinyInt:
		return signedFixed(1)
	case cqltype.SmallInt:
		return signedFixed(2)
	case cqltype.Int:
		return signedFixed(4)
	case cqltype.Timestamp:
		if t.Impl() == "DateType" {
			return rawFixed(8)
		}
		return signedFixed(8)
	case cqltype.Date:
		return rawFixed(4)
	case cqltype.Time:
		return rawFixed(8)
	case cqltype.Bigint:
		v, err := d.varInt()
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint64(nil, uint64(v)), nil
	case cqltype.Float, cqltype.Double:
		n := 4
		if t.Kind == cqltype.Double {
			n = 8
		}
		b, err := d.take(n, fmt.Sprintf("a %d-byte %s", n, t.Kind))
		if err != nil {
			return nil, err
		}
		out := append([]byte(nil), b...)
		if out[0] < 0x80 {
			for i := range out {
				out[i] ^= 0xFF
			}
		} else {
			out[0] ^= 0x80
		}
		return out, nil
	case cqltype.Varint:
		return d.integer()
	case cqltype.Decimal:
		return d.decimal()
	case cqltype.UUID:
		b, err := d.take(16, "a 16-byte uuid")
		if err != nil {
			return nil, err
		}
		hi := binary.BigEndian.Uint64(b)
		version := hi >> 60
		var msb uint64
		if version == 1 {
			msb = reorderBack(hi)
		} else {
			msb = (hi&0x0FFFFFFFFFFFF000)<<4 | version<<12 | hi&0xFFF
		}
		return append(binary.BigEndian.AppendUint64(nil, msb), b[8:]...), nil
	case cqltype.TimeUUID:
		b, err := d.take(16, "a 16-byte timeuuid")
		if err != nil {
			return nil, err
		}
		out := binary.BigEndian.AppendUint64(nil, reorderBack(binary.BigEndian.Uint64(b)))
		return binary.BigEndian.AppendUint64(out, binary.BigEndian.Uint64(b[8:])^0x8080808080808080), nil
	case cqltype.Custom:
		if t.Impl() == "LexicalUUIDType" {
			out, err := rawFixed(16)
			if err == nil {
				out[0] ^= 0x80
				out[8] ^= 0x80
			}
			return out, err
		}
	case cqltype.List, cqltype.Set, cqltype.Map:
		return d.collection(t, depth)
	case cqltype.Tuple, cqltype.UDT:
		return d.tuple(t, depth)
	case cqltype.Vector:
		return d.vector(t, depth)
	case cqltype.Composite:
		return d.composite(t, depth)
	}
	return nil, &UnsupportedError{Type: t.String()}
}

func reorderBack(x uint64) uint64 { return x<<32 | x>>16&0xFFFF0000 | x>>48 }

// element reads one component of a sequence: its separator, then a value,
// nothing for NextComponentNull (null is true). done is true at the
// sequence's terminator.
func (d *decoder) element(t *cqltype.Type, depth int) (v []byte, null, done bool, err error) {
	sep, err := d.byte("a component separator or terminator")
	if err != nil {
		return nil, false, false, err
	}
	switch sep {
	case Terminator:
		return nil, false, true, nil
	case NextComponentNull:
		return nil, true, false, nil
	case NextComponent:
		v, err = d.value(t, depth+1)
		return v, false, false, err
	}
	d.pos--
	return nil, false, false, d.errorf("a component separator 0x40/0x3e or terminator 0x38, found 0x%02x", sep)
}

func appendInt32Len(dst, v []byte, null bool) []byte {
	if null {
		return binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
	}
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(v))), v...)
}

func (d *decoder) collection(t *cqltype.Type, depth int) ([]byte, error) {
	out := []byte{0, 0, 0, 0}
	per := 1
	if t.Kind == cqltype.Map {
		per = 2
	}
	count := 0
	for i := 0; ; i++ {
		v, _, done, err := d.element(t.Params[i%per], depth)
		if err != nil {
			return nil, err
		}
		if done {
			if i%per != 0 {
				return nil, d.errorf("a map value after its key")
			}
			break
		}
		out = appendInt32Len(out, v, false) // a null source is an empty value
		count++
	}
	binary.BigEndian.PutUint32(out, uint32(count/per))
	return out, nil
}

// tuple decodes a tuple or UDT. Like TupleType.fromComparableBytes it
// returns every field, the trailing nulls the encoding leaves out included.
func (d *decoder) tuple(t *cqltype.Type, depth int) ([]byte, error) {
	var out []byte
	i := 0
	for ; i < len(t.Params); i++ {
		v, null, done, err := d.element(t.Params[i], depth)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
		out = appendInt32Len(out, v, null)
	}
	if i == len(t.Params) {
		if err := d.expect(Terminator, "the terminator after the last field"); err != nil {
			return nil, err
		}
	}
	for ; i < len(t.Params); i++ {
		out = appendInt32Len(out, nil, true)
	}
	return out, nil
}

func (d *decoder) vector(t *cqltype.Type, depth int) ([]byte, error) {
	if len(t.Params) != 1 {
		return nil, &UnsupportedError{Type: t.String()}
	}
	var out []byte
	fixed := t.Params[0].FixedLength() >= 0
	for i := 0; i < t.Dimension; i++ {
		v, null, done, err := d.element(t.Params[0], depth)
		if err != nil {
			return nil, err
		}
		if done || null {
			return nil, d.errorf("%d vector elements", t.Dimension)
		}
		if !fixed {
			out = appendUvint(out, uint64(len(v)))
		}
		out = append(out, v...)
	}
	if err := d.expect(Terminator, "the terminator after the last vector element"); err != nil {
		return nil, err
	}
	return out, nil
}

// appendUvint appends Cassandra's unsigned vint (leading ones count the
// extra bytes).
func appendUvint(dst []byte, v uint64) []byte {
	extra := 0
	for extra < 8 && v >= uint64(1)<<(7*(extra+1)) {
		extra++
	}
	if extra == 8 {
		return binary.BigEndian.AppendUint64(append(dst, 0xFF), v)
	}
	first := byte(0xFF<<(8-extra)) | byte(v>>(8*extra))
	dst = append(dst, first)
	for s := extra - 1; s >= 0; s-- {
		dst = append(dst, byte(v>>(8*s)))
	}
	return dst
}

func (d *decoder) composite(t *cqltype.Type, depth int) ([]byte, error) {
	var out []byte
	first, err := d.byte("a composite's leading separator")
	if err != nil {
		return nil, err
	}
	switch first {
	case NextComponentNull:
		out = append(out, 0xFF, 0xFF)
	case NextComponent:
	default:
		return nil, d.errorf("a composite's leading separator 0x40 or 0x3e, found 0x%02x", first)
	}
	for i := 0; ; i++ {
		var ct *cqltype.Type
		if i < len(t.Params) {
			ct = t.Params[i]
		} else {
			ct = t.Params[len(t.Params)-1]
		}
		v, _, done, err := d.element(ct, depth)
		if err != nil {
			return nil, err
		}
		if done {
			return out, nil
		}
		if i >= len(t.Params) {
			return nil, d.errorf("at most %d composite components", len(t.Params))
		}
		if len(v) > 0xFFFF {
			return nil, d.errorf("a composite component of at most 65535 bytes")
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(v)))
		out = append(out, v...)
		if err := d.expect(NextComponent, "the separator before an end-of-component byte"); err != nil {
			return nil, err
		}
		eoc, err := d.byte("an end-of-component byte")
		if err != nil {
			return nil, err
		}
		out = append(out, eoc^0x80)
	}
}

// decimal reads a decimal and returns it serialized with trailing zeros
// stripped down to scale 0 (the encoding does not keep the original scale:
// 1.1 and 1.10 encode alike; 100 comes back with scale -2).
func (d *decoder) decimal() ([]byte, error) {
	header, err := d.byte("a decimal header")
	if err != nil {
		return nil, err
	}
	if header == 0x80 {
		return []byte{0, 0, 0, 0, 0}, nil
	}
	negative := header < 0x80
	h := int(header &^ 0x80)
	n := h - 0x40
	if n < -4 || n > 4 {
		return nil, d.errorf("a decimal header with an exponent of at most 4 bytes, found 0x%02x", header)
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var mexp int64
	if n > 0 {
		b, err := d.take(n, "the decimal exponent")
		if err != nil {
			return nil, err
		}
		for _, c := range b {
			mexp = mexp<<8 | int64(c)
		}
		if neg {
			mexp -= int64(1) << (8 * uint(n)) // two's complement of n bytes
		}
	}
	exponent := mexp
	if negative {
		exponent = -mexp
	}
	// value = sum(digit_i * 100^-(i+1)) * 100^exponent
	num := new(big.Int)
	k := int64(0)
	for {
		c, err := d.byte("a decimal mantissa digit or its 0x00 end")
		if err != nil {
			return nil, err
		}
		if c == 0 {
			break
		}
		if k >= 1<<15 {
			return nil, d.errorf("a decimal mantissa of at most 2^15 base-100 digits")
		}
		num.Mul(num, bigHundred)
		num.Add(num, big.NewInt(int64(c)-0x80))
		k++
	}
	if k == 0 {
		return nil, d.errorf("at least one decimal mantissa digit")
	}
	// value = num * 100^(exponent-k) = num * 10^(2*(exponent-k))
	scale := -2 * (exponent - k)
	for scale > 0 && num.Sign() != 0 {
		q, r := new(big.Int).QuoRem(num, bigTen, new(big.Int))
		if r.Sign() != 0 {
			break
		}
		num, scale = q, scale-1
	}
	if scale > 1<<31-1 || scale < -1<<31 {
		return nil, d.errorf("a decimal scale that fits an int")
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(scale)), cqltype.VarintBytes(num)...), nil
}
