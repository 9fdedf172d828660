package cqltype

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// FromJSON is the inverse of AppendJSON: it reads the JSON text sstabledump
// writes for a value of this type (a cell value, a clustering value, an
// element of a collection) back into the value's bytes. Whatever AppendJSON
// writes for a valid value reads back to a value that AppendJSON writes the
// same way (FuzzFromJSONInvertsAppendJSON).
//
// Where AppendJSON's text does not tell two values apart, FromJSON picks
// one, always the same:
//   - `""` is the empty value for every type whose non-empty values print
//     otherwise (an empty int, timestamp, duration...), and a zero duration
//     (which also prints `""`);
//   - `null` for a float or double is NaN (Java's canonical NaN), as
//     ±Infinity print `null` too;
//   - a tuple or UDT carries every field of its type, a missing one as null
//     (a value written before fields were added to its type, shorter than
//     the type, prints the same);
//   - a timestamp's year is of the common era (SimpleDateFormat prints the
//     year of era without its era);
//   - an IPv4 address is 4 bytes (an IPv4-mapped IPv6 address prints the same);
//   - a boolean's true is the byte 1;
//   - a counter (which AppendJSON prints as the first 8 bytes of its
//     context) is those 8 bytes.
//
// The input is one JSON value; anything else (a second value, a syntax
// error) is an error.
func (t *Type) FromJSON(v []byte) ([]byte, error) {
	return t.appendFromJSON(nil, bytes.TrimSpace(v))
}

// AppendFromJSON appends the bytes FromJSON reads from v to dst; on an
// error dst is returned as it was.
func (t *Type) AppendFromJSON(dst, v []byte) ([]byte, error) {
	n := len(dst)
	out, err := t.appendFromJSON(dst, bytes.TrimSpace(v))
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// errJSON words what a value's JSON was expected to be.
func errJSON(t *Type, what string, found []byte) error {
	const max = 60
	f := string(found)
	if len(f) > max {
		f = f[:max] + "..."
	}
	return fmt.Errorf("expected %s for a %s value, found %s", what, t.CQL(), f)
}

// jsonString unquotes a JSON string value; ok is false for any other value.
func jsonString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(v[1:len(v)-1], '\\') < 0 && bytes.IndexByte(v[1:len(v)-1], '"') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	s, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return "", false
	}
	return string(s), true
}

func (t *Type) appendFromJSON(dst, v []byte) ([]byte, error) {
	switch t.Kind {
	case Ascii, Text:
		s, ok := jsonString(v)
		if !ok {
			return dst, errJSON(t, "a JSON string", v)
		}
		if t.Kind == Ascii {
			for i := 0; i < len(s); i++ {
				if s[i] >= 0x80 {
					return dst, errJSON(t, "ASCII text", v)
				}
			}
		}
		return append(dst, s...), nil
	case Blob:
		return appendHexJSON(t, dst, v)
	case Empty:
		if string(v) != `""` {
			return dst, errJSON(t, `""`, v)
		}
		return dst, nil
	case Time:
		if string(v) == `"null"` {
			return dst, nil
		}
	case Custom:
		if t.impl != "LexicalUUIDType" {
			return appendHexJSON(t, dst, v)
		}
	case List, Set:
		return t.appendCollectionFromJSON(dst, v)
	case Map:
		return t.appendMapFromJSON(dst, v)
	case Tuple, UDT:
		return t.appendFieldsFromJSON(dst, v)
	case Vector:
		return t.appendVectorFromJSON(dst, v)
	case Composite, DynamicComposite:
		s, ok := jsonString(v)
		if !ok {
			return dst, errJSON(t, "a JSON string", v)
		}
		return t.appendFromString(dst, s)
	}
	if string(v) == `""` {
		return dst, nil
	}
	switch t.Kind {
	case Boolean:
		switch string(v) {
		case "true":
			return append(dst, 1), nil
		case "false":
			return append(dst, 0), nil
		}
		return dst, errJSON(t, "true or false", v)
	case TinyInt, SmallInt, Int, Bigint, Counter:
		bits := map[Kind]int{TinyInt: 8, SmallInt: 16, Int: 32, Bigint: 64, Counter: 64}[t.Kind]
		n, err := strconv.ParseInt(string(v), 10, bits)
		if err != nil {
			return dst, errJSON(t, fmt.Sprintf("a %d-bit integer", bits), v)
		}
		return appendBigEndian(dst, uint64(n), bits/8), nil
	case Varint, Decimal:
		if !isJSONNumber(v) {
			return dst, errJSON(t, "a number", v)
		}
		return t.appendFromString(dst, string(v))
	case Float, Double:
		bits := 64
		if t.Kind == Float {
			bits = 32
		}
		if string(v) == "null" {
			// NaN and both infinities print null: read it as Java's NaN.
			if bits == 32 {
				return binary.BigEndian.AppendUint32(dst, 0x7fc00000), nil
			}
			return binary.BigEndian.AppendUint64(dst, 0x7ff8000000000000), nil
		}
		if !isJSONNumber(v) {
			return dst, errJSON(t, "a number or null", v)
		}
		return t.appendFromString(dst, string(v))
	}
	// The rest print as a JSON string of their text form.
	s, ok := jsonString(v)
	if !ok {
		return dst, errJSON(t, "a JSON string", v)
	}
	if t.Kind == Timestamp {
		ms, ok := parseSimpleDateFormat(s, ' ')
		if !ok {
			return dst, errJSON(t, `a timestamp "yyyy-MM-dd HH:mm:ss.SSSZ"`, v)
		}
		return binary.BigEndian.AppendUint64(dst, uint64(ms)), nil
	}
	return t.appendFromString(dst, s)
}

// isJSONNumber reports whether v is a JSON number (and not, say, NaN,
// which strconv would take).
func isJSONNumber(v []byte) bool {
	return len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) && jsontext.Value(v).IsValid()
}

func appendBigEndian(dst []byte, u uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(u>>(8*i)))
	}
	return dst
}

// appendHexJSON reads "0x..." (a blob, a custom type).
func appendHexJSON(t *Type, dst, v []byte) ([]byte, error) {
	s, ok := jsonString(v)
	if !ok || !strings.HasPrefix(s, "0x") {
		return dst, errJSON(t, `a JSON string "0x" and hex digits`, v)
	}
	out, ok := appendHexDecoded(dst, s[2:])
	if !ok {
		return dst, errJSON(t, `a JSON string "0x" and hex digits`, v)
	}
	return out, nil
}

// appendHexDecoded appends the bytes of hex digits (either case).
func appendHexDecoded(dst []byte, s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return dst, false
	}
	for i := 0; i < len(s); i += 2 {
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return dst, false
		}
		dst = append(dst, hi<<4|lo)
	}
	return dst, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// jsonElements splits a JSON array or object value into its elements (for
// an object, alternately names and values), each as raw JSON text.
func jsonElements(v []byte, open jsontext.Kind) ([]jsontext.Value, error) {
	d := jsontext.NewDecoder(bytes.NewReader(v))
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != open {
		return nil, errors.New("wrong kind")
	}
	var out []jsontext.Value
	for d.PeekKind() != open+2 { // ']' is '['+2, '}' is '{'+2
		val, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		out = append(out, val.Clone())
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return out, nil
}

func appendElem(dst []byte, e []byte, null bool) []byte {
	if null {
		return binary.BigEndian.AppendUint32(dst, 0xFFFFFFFF)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(e)))
	return append(dst, e...)
}

// elementFromJSON reads one element of a collection, tuple or UDT: null,
// or a value of type p.
func elementFromJSON(dst []byte, p *Type, e []byte) ([]byte, error) {
	if string(e) == "null" && p.Kind != Float && p.Kind != Double {
		return appendElem(dst, nil, true), nil
	}
	val, err := p.appendFromJSON(nil, e)
	if err != nil {
		return dst, err
	}
	return appendElem(dst, val, false), nil
}

func (t *Type) appendCollectionFromJSON(dst, v []byte) ([]byte, error) {
	elems, err := jsonElements(v, '[')
	if err != nil {
		return dst, errJSON(t, "a JSON array", v)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(elems)))
	for i, e := range elems {
		if dst, err = elementFromJSON(dst, t.Params[0], e); err != nil {
			return dst, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return dst, nil
}

// jsonIsString reports whether AppendJSON prints every non-empty value of
// t as a JSON string (so that a map key of t is printed as is).
func (t *Type) jsonIsString() bool {
	switch t.Kind {
	case Ascii, Text, Blob, Empty, Time, Custom, Composite, DynamicComposite,
		Date, Timestamp, UUID, TimeUUID, Inet, Duration:
		return true
	}
	return false
}

func (t *Type) appendMapFromJSON(dst, v []byte) ([]byte, error) {
	elems, err := jsonElements(v, '{')
	if err != nil {
		return dst, errJSON(t, "a JSON object", v)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(elems)/2))
	for i := 0; i+1 < len(elems); i += 2 {
		key := []byte(elems[i])
		if !t.Params[0].jsonIsString() && string(key) != `""` {
			// A key whose JSON is not a string was quoted as text.
			s, _ := jsonString(key)
			key = []byte(s)
		}
		if dst, err = elementFromJSON(dst, t.Params[0], key); err != nil {
			return dst, fmt.Errorf("key %s: %w", elems[i], err)
		}
		if dst, err = elementFromJSON(dst, t.Params[1], elems[i+1]); err != nil {
			return dst, fmt.Errorf("value of key %s: %w", elems[i], err)
		}
	}
	return dst, nil
}

// appendFieldsFromJSON reads a tuple (an array) or a UDT (an object keyed
// by field name, in any order; a name that is not all lower case wrapped
// in double quotes as UserType.toJSONString wraps it). Every field of the
// type is written, absent ones as null.
func (t *Type) appendFieldsFromJSON(dst, v []byte) ([]byte, error) {
	named := t.Kind == UDT
	open, what := jsontext.Kind('['), "a JSON array"
	if named {
		open, what = '{', "a JSON object"
	}
	elems, err := jsonElements(v, open)
	if err != nil {
		return dst, errJSON(t, what, v)
	}
	fields := make([]jsontext.Value, len(t.Params))
	if !named {
		if len(elems) > len(t.Params) {
			return dst, errJSON(t, fmt.Sprintf("at most %d fields", len(t.Params)), v)
		}
		copy(fields, elems)
	} else {
		for i := 0; i+1 < len(elems); i += 2 {
			name, _ := jsonString(elems[i])
			k := slices.Index(t.FieldNames, name)
			if n := len(name); k < 0 && n >= 2 && name[0] == '"' && name[n-1] == '"' {
				k = slices.Index(t.FieldNames, name[1:n-1])
			}
			if k < 0 {
				return dst, errJSON(t, "the name of one of its fields ("+strings.Join(t.FieldNames, ", ")+")", elems[i])
			}
			fields[k] = elems[i+1]
		}
	}
	for i, f := range fields {
		if f == nil {
			dst = appendElem(dst, nil, true)
			continue
		}
		if dst, err = elementFromJSON(dst, t.Params[i], f); err != nil {
			return dst, fmt.Errorf("field %d: %w", i, err)
		}
	}
	return dst, nil
}

func (t *Type) appendVectorFromJSON(dst, v []byte) ([]byte, error) {
	elems, err := jsonElements(v, '[')
	if err != nil || len(elems) != t.Dimension {
		return dst, errJSON(t, fmt.Sprintf("a JSON array of %d elements", t.Dimension), v)
	}
	elem := t.Params[0]
	if elem.FixedLength() == 0 {
		return dst, errJSON(t, "a vector of elements with a width", v)
	}
	for i, e := range elems {
		val, err := elem.appendFromJSON(nil, e)
		if err != nil {
			return dst, fmt.Errorf("element %d: %w", i, err)
		}
		if w := elem.FixedLength(); w > 0 {
			if len(val) != w {
				return dst, fmt.Errorf("element %d: expected %d bytes, found %d", i, w, len(val))
			}
		} else {
			dst = vint.AppendUnsigned(dst, uint64(len(val)))
		}
		dst = append(dst, val...)
	}
	return dst, nil
}
