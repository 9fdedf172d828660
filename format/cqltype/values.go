package cqltype

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Value errors are *corrupt.Error with Offset relative to the start
// of the value and File/Component empty: a caller that knows where the value
// sits adds its position and names the file (see WithPosition).

func valueErr(t *Type, off int, format string, args ...any) error {
	// corrupt.Error prints "expected " before Expected.
	msg := strings.TrimPrefix(fmt.Sprintf(format, args...), "expected ")
	return &corrupt.Error{
		Offset:   int64(off),
		Expected: msg + " in a " + t.CQL() + " value",
	}
}

// WithPosition returns err with its value-relative offset moved by base and
// the file and component named, when err is a *corrupt.Error from this
// package; other errors are wrapped with the same context.
func WithPosition(err error, file, component string, base int64) error {
	if err == nil {
		return nil
	}
	if _, ok := corrupt.As(err); ok {
		return corrupt.Place(err, file, component, base)
	}
	return corrupt.New(file, component, base, "a valid value", err)
}

// shift moves the offset of a nested value's error by base.
func shift(err error, base int) error {
	return corrupt.Place(err, "", "", int64(base))
}

// ---- sstabledump JSON (AbstractType.toJSONString) ----

// AppendJSON appends the raw JSON text sstabledump writes for a value of this
// type (AbstractType.toJSONString, used for cell values and clustering
// values). Empty values print as sstabledump prints them: `""` for most
// types, `"null"` for time. Where Java would crash (an empty boolean or
// tinyint) it prints `""` too. Counter values follow Java literally: the
// first 8 bytes of the counter context read as a long (sstabledump does not
// compute the total; use CounterTotal for the counter's value).
func (t *Type) AppendJSON(dst []byte, v []byte) ([]byte, error) {
	switch t.Kind {
	case Ascii:
		for i, c := range v {
			if c >= 0x80 {
				return dst, valueErr(t, i, "expected an ASCII byte, found 0x%02x", c)
			}
		}
		return appendJSONQuoted(dst, v), nil
	case Text:
		if !utf8.Valid(v) {
			return dst, valueErr(t, invalidUTF8At(v), "expected valid UTF-8")
		}
		return appendJSONQuoted(dst, v), nil
	case Blob:
		dst = append(dst, `"0x`...)
		dst = appendHex(dst, v)
		return append(dst, '"'), nil
	case Empty:
		return append(dst, `""`...), nil
	case Time:
		if len(v) == 0 {
			return append(dst, `"null"`...), nil
		}
	case Custom:
		if t.impl != "LexicalUUIDType" {
			dst = append(dst, `"0x`...)
			dst = appendHex(dst, v)
			return append(dst, '"'), nil
		}
	case List, Set:
		return t.appendCollectionJSON(dst, v)
	case Map:
		return t.appendMapJSON(dst, v)
	case Tuple:
		return t.appendTupleJSON(dst, v)
	case UDT:
		return t.appendUDTJSON(dst, v)
	case Vector:
		return t.appendVectorJSON(dst, v)
	case Composite, DynamicComposite:
		// Java cannot print these as JSON (CASSANDRA-18177); print the
		// string form so a dump still shows them.
		start := len(dst)
		dst = append(dst, '"')
		s, err := t.AppendFormat(nil, v)
		if err != nil {
			return dst[:start], err
		}
		dst = appendJSONEscaped(dst, s)
		return append(dst, '"'), nil
	}
	if len(v) == 0 {
		return append(dst, `""`...), nil
	}
	if err := t.checkFixedSize(v); err != nil {
		return dst, err
	}
	if out, ok := t.appendScalar(dst, v); ok {
		return out, nil
	}
	switch t.Kind {
	case Counter:
		if len(v) < 8 {
			return dst, valueErr(t, 0, "expected a counter context of at least 8 bytes, found %d", len(v))
		}
		return strconv.AppendInt(dst, int64(binary.BigEndian.Uint64(v)), 10), nil
	case Varint:
		return appendVarint(dst, v), nil
	case Decimal:
		return appendBigDecimal(dst, v[4:], int32(binary.BigEndian.Uint32(v))), nil
	case Float:
		f := float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(dst, "null"...), nil
		}
		return appendJavaFloat(dst, f, 32), nil
	case Double:
		f := math.Float64frombits(binary.BigEndian.Uint64(v))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return append(dst, "null"...), nil
		}
		return appendJavaFloat(dst, f, 64), nil
	}
	// The rest print as a JSON string of their text form, which never
	// needs escaping.
	dst = append(dst, '"')
	dst, err := t.appendScalarString(dst, v, ' ')
	if err != nil {
		return dst, err
	}
	return append(dst, '"'), nil
}

// checkFixedSize rejects values whose length cannot belong to the type.
func (t *Type) checkFixedSize(v []byte) error {
	want := 0
	switch t.Kind {
	case Boolean, TinyInt:
		want = 1
	case SmallInt:
		want = 2
	case Int, Float, Date:
		want = 4
	case Bigint, Double, Timestamp, Time:
		want = 8
	case UUID, TimeUUID:
		want = 16
	case Custom:
		if t.impl == "LexicalUUIDType" {
			want = 16
		}
	case Decimal:
		if len(v) < 4 {
			return valueErr(t, 0, "expected a 4-byte scale, found %d bytes", len(v))
		}
	case Inet:
		if len(v) != 4 && len(v) != 16 {
			return valueErr(t, 0, "expected 4 or 16 address bytes, found %d", len(v))
		}
	case Duration:
		if len(v) < 3 {
			return valueErr(t, 0, "expected at least 3 bytes, found %d", len(v))
		}
	}
	if want > 0 && len(v) != want {
		return valueErr(t, 0, "expected %d bytes, found %d", want, len(v))
	}
	return nil
}

// appendScalarString appends the text form of a non-empty value of a
// single-value type whose size was checked. sep separates date and time
// in timestamps: ' ' in JSON, 'T' in getString.
func (t *Type) appendScalarString(dst, v []byte, sep byte) ([]byte, error) {
	switch t.Kind {
	case Date:
		days := int64(int32(binary.BigEndian.Uint32(v) - 1<<31))
		return appendISOLocalDate(dst, days), nil
	case Time:
		return appendJavaTime(dst, int64(binary.BigEndian.Uint64(v))), nil
	case Timestamp:
		return appendSimpleDateFormat(dst, int64(binary.BigEndian.Uint64(v)), sep), nil
	case UUID, TimeUUID, Custom:
		return appendUUID(dst, v), nil
	case Inet:
		return appendInet(dst, v), nil
	case Duration:
		return t.appendDuration(dst, v)
	}
	return dst, valueErr(t, 0, "a type this package can print")
}

// appendDuration decodes three signed vints (months, days, nanoseconds)
// and prints Duration.toString ("1y2mo3d4h5m6s7ms8us9ns").
func (t *Type) appendDuration(dst, v []byte) ([]byte, error) {
	var f [3]int64
	off := 0
	for i := range f {
		x, n, err := vint.Signed(v[off:])
		if err != nil {
			return dst, valueErr(t, off, "expected a vint (%s)", err)
		}
		if i < 2 && x != int64(int32(x)) {
			return dst, valueErr(t, off, "expected a 32-bit %s count, found %d", [2]string{"month", "day"}[i], x)
		}
		f[i] = x
		off += n
	}
	if off != len(v) {
		return dst, valueErr(t, off, "expected the value to end after three vints, found %d more bytes", len(v)-off)
	}
	months, days, nanos := f[0], f[1], f[2]
	if !((months >= 0 && days >= 0 && nanos >= 0) || (months <= 0 && days <= 0 && nanos <= 0)) {
		return dst, valueErr(t, 0, "expected months, days and nanoseconds of one sign, found %d, %d, %d", months, days, nanos)
	}
	if months < 0 || days < 0 || nanos < 0 {
		dst = append(dst, '-')
	}
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	part := func(dividend, divisor int64, unit string) int64 {
		if dividend == 0 || dividend < divisor {
			return dividend
		}
		dst = strconv.AppendInt(dst, dividend/divisor, 10)
		dst = append(dst, unit...)
		return dividend % divisor
	}
	rem := part(abs(months), 12, "y")
	part(rem, 1, "mo")
	part(abs(days), 1, "d")
	if nanos != 0 {
		rem = part(abs(nanos), 3600_000_000_000, "h")
		rem = part(rem, 60_000_000_000, "m")
		rem = part(rem, 1_000_000_000, "s")
		rem = part(rem, 1_000_000, "ms")
		rem = part(rem, 1_000, "us")
		part(rem, 1, "ns")
	}
	return dst, nil
}

// elemAt reads one [int32 length][bytes] element at off; a negative
// length is a null element. ok is false when the bytes run out.
func elemAt(v []byte, off int) (elem []byte, next int, null, ok bool) {
	if len(v)-off < 4 {
		return nil, off, false, false
	}
	n := int32(binary.BigEndian.Uint32(v[off:]))
	if n < 0 {
		return nil, off + 4, true, true
	}
	if int64(n) > int64(len(v)-off-4) {
		return nil, off, false, false
	}
	return v[off+4 : off+4+int(n)], off + 4 + int(n), false, true
}

// readElem is elemAt with an error that says what was missing.
func (t *Type) readElem(v []byte, off int) (elem []byte, next int, null bool, err error) {
	elem, next, null, ok := elemAt(v, off)
	if ok {
		return elem, next, null, nil
	}
	if len(v)-off < 4 {
		return nil, off, false, valueErr(t, off, "expected a 4-byte element length, found %d bytes", len(v)-off)
	}
	n := int32(binary.BigEndian.Uint32(v[off:]))
	return nil, off, false, valueErr(t, off, "expected an element of %d bytes, found %d bytes left", n, len(v)-off-4)
}

// readCount reads a collection's int32 element count and checks it against
// the bytes left (each element takes at least 4 bytes) before anything is
// allocated or looped over.
func (t *Type) readCount(v []byte, perElem int) (int, error) {
	if len(v) < 4 {
		return 0, valueErr(t, 0, "expected a 4-byte element count, found %d bytes", len(v))
	}
	n := int32(binary.BigEndian.Uint32(v))
	if n < 0 {
		return 0, valueErr(t, 0, "expected a non-negative element count, found %d", n)
	}
	if int64(n)*int64(perElem) > int64(len(v)-4) {
		return 0, valueErr(t, 0, "expected at most %d elements in %d bytes, found count %d", (len(v)-4)/perElem, len(v)-4, n)
	}
	return int(n), nil
}

func (t *Type) appendCollectionJSON(dst, v []byte) ([]byte, error) {
	n, err := t.readCount(v, 4)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, '[')
	off := 4
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		e, next, null, err := t.readElem(v, off)
		if err != nil {
			return dst[:start], err
		}
		if null {
			dst = append(dst, "null"...)
		} else if dst, err = t.Params[0].AppendJSON(dst, e); err != nil {
			return dst[:start], shift(err, off+4)
		}
		off = next
	}
	if off != len(v) {
		return dst[:start], valueErr(t, off, "expected the value to end after %d elements, found %d more bytes", n, len(v)-off)
	}
	return append(dst, ']'), nil
}

func (t *Type) appendMapJSON(dst, v []byte) ([]byte, error) {
	n, err := t.readCount(v, 8)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, '{')
	off := 4
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		k, next, null, err := t.readElem(v, off)
		if err != nil {
			return dst[:start], err
		}
		// Map keys must be JSON strings: a key whose JSON is not already
		// a string is quoted as text.
		keyStart := len(dst)
		if null {
			dst = append(dst, "null"...)
		} else if dst, err = t.Params[0].AppendJSON(dst, k); err != nil {
			return dst[:start], shift(err, off+4)
		}
		if dst[keyStart] != '"' {
			raw := string(dst[keyStart:])
			dst = append(dst[:keyStart], '"')
			dst = appendJSONEscaped(dst, []byte(raw))
			dst = append(dst, '"')
		}
		dst = append(dst, ": "...)
		off = next
		val, next, null, err := t.readElem(v, off)
		if err != nil {
			return dst[:start], err
		}
		if null {
			dst = append(dst, "null"...)
		} else if dst, err = t.Params[1].AppendJSON(dst, val); err != nil {
			return dst[:start], shift(err, off+4)
		}
		off = next
	}
	if off != len(v) {
		return dst[:start], valueErr(t, off, "expected the value to end after %d entries, found %d more bytes", n, len(v)-off)
	}
	return append(dst, '}'), nil
}

// field reads field i of a tuple or UDT value at off. Values may hold
// fewer fields than the type (fields added later): past the end every
// field is null. A negative length is null too.
func (t *Type) field(v []byte, off int) (f []byte, next int, null bool, err error) {
	if off == len(v) {
		return nil, off, true, nil
	}
	return t.readElem(v, off)
}

// fieldsEnd checks that a tuple or UDT value holds no more than its fields.
func (t *Type) fieldsEnd(v []byte, off int) error {
	if off != len(v) {
		return valueErr(t, off, "expected the value to end after %d fields, found %d more bytes", len(t.Params), len(v)-off)
	}
	return nil
}

func (t *Type) appendTupleJSON(dst, v []byte) ([]byte, error) {
	return t.appendFieldsJSON(dst, v, false)
}

func (t *Type) appendUDTJSON(dst, v []byte) ([]byte, error) { return t.appendFieldsJSON(dst, v, true) }

// appendFieldsJSON writes a tuple as a JSON array, or a UDT (named) as an
// object keyed by field name; both are length-prefixed fields, -1 for null.
func (t *Type) appendFieldsJSON(dst, v []byte, named bool) ([]byte, error) {
	start := len(dst)
	open, close := byte('['), byte(']')
	if named {
		open, close = '{', '}'
	}
	dst = append(dst, open)
	off := 0
	for i, p := range t.Params {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		if named {
			dst = appendUDTFieldName(dst, t.FieldNames[i])
			dst = append(dst, ": "...)
		}
		f, next, null, err := t.field(v, off)
		if err != nil {
			return dst[:start], err
		}
		if null {
			dst = append(dst, "null"...)
		} else if dst, err = p.AppendJSON(dst, f); err != nil {
			return dst[:start], shift(err, off+4)
		}
		off = next
	}
	if err := t.fieldsEnd(v, off); err != nil {
		return dst[:start], err
	}
	return append(dst, close), nil
}

// appendUDTFieldName writes a UDT field name as a JSON key; names that are
// not all lower case are wrapped in (escaped) double quotes first, the way
// UserType.toJSONString does.
func appendUDTFieldName(dst []byte, name string) []byte {
	dst = append(dst, '"')
	if name != strings.ToLower(name) {
		dst = append(dst, `\"`...)
		dst = appendJSONEscaped(dst, []byte(name))
		dst = append(dst, `\"`...)
	} else {
		dst = appendJSONEscaped(dst, []byte(name))
	}
	return append(dst, '"')
}

// vectorStart checks a vector value's size when its elements have a fixed
// width; elements of a variable width are checked one by one by vectorElem.
func (t *Type) vectorStart(v []byte) error {
	elem := t.Params[0]
	switch w := elem.FixedLength(); {
	case w == 0:
		// Zero-width elements would make the output unbounded by the input.
		return valueErr(t, 0, "a vector of elements with a width, found zero-width %s elements", elem.CQL())
	case w > 0 && len(v) != w*t.Dimension:
		return valueErr(t, 0, "expected %d bytes (%d elements of %d), found %d", w*t.Dimension, t.Dimension, w, len(v))
	}
	return nil
}

// vectorElem returns the element at off and where the next one starts:
// fixed-width elements lie back to back, others carry an unsigned-vint
// length. at is where the element's bytes begin.
func (t *Type) vectorElem(v []byte, off int) (e []byte, at, next int, err error) {
	if w := t.Params[0].FixedLength(); w > 0 {
		return v[off : off+w], off, off + w, nil
	}
	n, w, err := vint.Unsigned(v[off:])
	if err != nil {
		return nil, off, off, valueErr(t, off, "expected a vint element length (%s)", err)
	}
	if n > uint64(len(v)-off-w) {
		return nil, off, off, valueErr(t, off, "expected an element of %d bytes, found %d bytes left", n, len(v)-off-w)
	}
	at = off + w
	return v[at : at+int(n)], at, at + int(n), nil
}

// vectorEnd checks that a variable-width vector value ends after its elements.
func (t *Type) vectorEnd(v []byte, off int) error {
	if off != len(v) {
		return valueErr(t, off, "expected the value to end after %d elements, found %d more bytes", t.Dimension, len(v)-off)
	}
	return nil
}

func (t *Type) appendVectorJSON(dst, v []byte) ([]byte, error) {
	return t.appendVector(dst, v, (*Type).AppendJSON)
}

// appendVector writes "[e1, e2, ...]" with each element rendered by elem.
func (t *Type) appendVector(dst, v []byte, elem func(*Type, []byte, []byte) ([]byte, error)) ([]byte, error) {
	if err := t.vectorStart(v); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, '[')
	off := 0
	for i := 0; i < t.Dimension; i++ {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		e, at, next, err := t.vectorElem(v, off)
		if err != nil {
			return dst[:start], err
		}
		if dst, err = elem(t.Params[0], dst, e); err != nil {
			return dst[:start], shift(err, at)
		}
		off = next
	}
	if err := t.vectorEnd(v, off); err != nil {
		return dst[:start], err
	}
	return append(dst, ']'), nil
}

// ---- JSON string quoting (Jackson's JsonStringEncoder rules) ----

// AppendJSONString appends s as a JSON string the way sstabledump's Jackson
// generator writes it: '"' and '\\' escaped, \b \t \n \f \r as short
// escapes, other control characters as \u00XX with upper-case hex, and
// everything else (including non-ASCII) as-is.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			dst = append(dst, s[run:i]...)
			dst = appendJSONByte(dst, c)
			run = i + 1
		}
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}

func appendJSONQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = appendJSONEscaped(dst, s)
	return append(dst, '"')
}

func appendJSONEscaped(dst, s []byte) []byte {
	// Copy runs of bytes that need no escaping in one append.
	run := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[run:i]...)
		dst = appendJSONByte(dst, c)
		run = i + 1
	}
	return append(dst, s[run:]...)
}

func appendJSONByte(dst []byte, c byte) []byte {
	if c >= 0x20 && c != '"' && c != '\\' {
		return append(dst, c)
	}
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	}
	const upper = "0123456789ABCDEF"
	return append(dst, '\\', 'u', '0', '0', upper[c>>4], upper[c&15])
}

func invalidUTF8At(v []byte) int {
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

// appendScalar renders booleans and the fixed-width integers, which print
// the same way in JSON and as getString text. v has its fixed size.
func (t *Type) appendScalar(dst, v []byte) ([]byte, bool) {
	switch t.Kind {
	case Boolean:
		if v[0] != 0 {
			return append(dst, "true"...), true
		}
		return append(dst, "false"...), true
	case TinyInt:
		return strconv.AppendInt(dst, int64(int8(v[0])), 10), true
	case SmallInt:
		return strconv.AppendInt(dst, int64(int16(binary.BigEndian.Uint16(v))), 10), true
	case Int:
		return strconv.AppendInt(dst, int64(int32(binary.BigEndian.Uint32(v))), 10), true
	case Bigint:
		return strconv.AppendInt(dst, int64(binary.BigEndian.Uint64(v)), 10), true
	}
	return dst, false
}
