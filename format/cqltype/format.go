package cqltype

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// Format returns the value as text the way AbstractType.getString does;
// sstabledump prints partition keys and the cell paths of non-frozen
// collections with it (as JSON strings, see AppendJSONString). Examples:
// text as-is, blob as bare hex, timestamp as "2012-05-14T12:53:20.000Z",
// frozen collections as bare hex, tuples and UDTs as "a:b:@" (null is @).
func (t *Type) Format(v []byte) (string, error) {
	b, err := t.AppendFormat(nil, v)
	return string(b), err
}

// AppendFormat appends the Format text of v to dst.
func (t *Type) AppendFormat(dst, v []byte) ([]byte, error) {
	switch t.Kind {
	case Ascii:
		for i, c := range v {
			if c >= 0x80 {
				return dst, valueErr(t, i, "expected an ASCII byte, found 0x%02x", c)
			}
		}
		return append(dst, v...), nil
	case Text:
		if !utf8.Valid(v) {
			return dst, valueErr(t, invalidUTF8At(v), "expected valid UTF-8")
		}
		return append(dst, v...), nil
	case Blob, Counter, List, Set, Map:
		// CollectionType.getString and CounterColumnType.getString are hex.
		return appendHex(dst, v), nil
	case Empty:
		if len(v) != 0 {
			return dst, valueErr(t, 0, "expected no bytes, found %d", len(v))
		}
		return dst, nil
	case Custom:
		if t.impl != "LexicalUUIDType" {
			return appendHex(dst, v), nil
		}
	case Tuple, UDT:
		return t.appendTupleString(dst, v)
	case Vector:
		return t.appendVectorString(dst, v)
	case Composite, DynamicComposite:
		return t.appendCompositeString(dst, v)
	}
	// Serializers whose validate rejects empty values.
	switch t.Kind {
	case TinyInt, SmallInt, Date, Time:
		if err := t.checkFixedSize(v); err != nil {
			return dst, err
		}
	}
	if len(v) == 0 {
		return dst, nil
	}
	if err := t.checkFixedSize(v); err != nil {
		return dst, err
	}
	if out, ok := t.appendScalar(dst, v); ok {
		return out, nil
	}
	switch t.Kind {
	case Varint:
		return appendVarint(dst, v), nil
	case Decimal:
		return appendBigDecimal(dst, v[4:], int32(binary.BigEndian.Uint32(v))), nil
	case Float:
		return appendJavaFloat(dst, float64(math.Float32frombits(binary.BigEndian.Uint32(v))), 32), nil
	case Double:
		return appendJavaFloat(dst, math.Float64frombits(binary.BigEndian.Uint64(v)), 64), nil
	}
	return t.appendScalarString(dst, v, 'T')
}

// appendTupleString is TupleType.getString: fields joined by ':', a null
// field as '@', ':' and '@' inside a field escaped with '\'; it stops at
// the end of the value when it holds fewer fields than the type.
func (t *Type) appendTupleString(dst, v []byte) ([]byte, error) {
	start := len(dst)
	off := 0
	var scratch []byte
	for i := range t.Params {
		if off == len(v) {
			break
		}
		if i > 0 {
			dst = append(dst, ':')
		}
		f, next, null, err := t.readElem(v, off)
		if err != nil {
			return dst[:start], err
		}
		if null {
			dst = append(dst, '@')
			off = next
			continue
		}
		scratch, err = t.Params[i].AppendFormat(scratch[:0], f)
		if err != nil {
			return dst[:start], shift(err, off+4)
		}
		for _, c := range scratch {
			if c == ':' || c == '@' {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		}
		off = next
	}
	if off != len(v) {
		return dst[:start], valueErr(t, off, "expected the value to end after %d fields, found %d more bytes", len(t.Params), len(v)-off)
	}
	return dst, nil
}

// appendVectorString is VectorSerializer.toString: "[e1, e2]" with each
// element's serializer text.
func (t *Type) appendVectorString(dst, v []byte) ([]byte, error) {
	return t.appendVector(dst, v, (*Type).appendSerializerString)
}

// appendSerializerString is TypeSerializer.toString(deserialize(v)), which
// differs from getString only for collections: "[a, b]", "{a, b}", "{k: v}".
func (t *Type) appendSerializerString(dst, v []byte) ([]byte, error) {
	if t.Kind != List && t.Kind != Set && t.Kind != Map {
		return t.AppendFormat(dst, v)
	}
	per := 4
	if t.Kind == Map {
		per = 8
	}
	n, err := t.readCount(v, per)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	open, close := byte('{'), byte('}')
	if t.Kind == List {
		open, close = '[', ']'
	}
	dst = append(dst, open)
	off := 4
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		for j := 0; j < per/4; j++ {
			if j == 1 {
				dst = append(dst, ": "...)
			}
			e, next, null, err := t.readElem(v, off)
			if err != nil {
				return dst[:start], err
			}
			if null {
				dst = append(dst, "null"...)
			} else if dst, err = t.Params[j].appendSerializerString(dst, e); err != nil {
				return dst[:start], shift(err, off+4)
			}
			off = next
		}
	}
	if off != len(v) {
		return dst[:start], valueErr(t, off, "expected the value to end after %d elements, found %d more bytes", n, len(v)-off)
	}
	return append(dst, close), nil
}

// CompositeComponent is one component of a CompositeType or
// DynamicCompositeType value.
type CompositeComponent struct {
	Type  *Type  // the component's type
	Value []byte // the component's bytes
	EOC   int8   // end-of-component byte: 0, or -1/1 in slice bounds
	Alias string // DynamicComposite only: the alias or class name written in the value
}

// Components splits a CompositeType or DynamicCompositeType value into its
// components (each a 2-byte length, the bytes and an end-of-component byte;
// DynamicComposite components are preceded by their alias or class name).
// static reports the 0xFFFF static-row marker of CompositeType. A
// multi-column partition key is a CompositeType value: sstabledump prints
// each component with Format.
func (t *Type) Components(v []byte) (comps []CompositeComponent, static bool, err error) {
	if t.Kind != Composite && t.Kind != DynamicComposite {
		return nil, false, valueErr(t, 0, "expected a composite type")
	}
	off := 0
	if t.Kind == Composite && len(v) >= 2 && binary.BigEndian.Uint16(v) == 0xFFFF {
		static = true
		off = 2
	}
	for i := 0; off < len(v); i++ {
		var c CompositeComponent
		if t.Kind == Composite {
			if i >= len(t.Params) {
				return nil, static, valueErr(t, off, "expected at most %d components", len(t.Params))
			}
			c.Type = t.Params[i]
		} else {
			var n int
			c.Type, c.Alias, n, err = t.dynamicComparator(v, off)
			if err != nil {
				return nil, static, err
			}
			off += n
		}
		if len(v)-off < 2 {
			return nil, static, valueErr(t, off, "expected a 2-byte component length, found %d bytes", len(v)-off)
		}
		n := int(binary.BigEndian.Uint16(v[off:]))
		off += 2
		if len(v)-off < n+1 {
			return nil, static, valueErr(t, off-2, "expected a component of %d bytes and its end-of-component byte, found %d bytes", n, len(v)-off)
		}
		c.Value = v[off : off+n]
		c.EOC = int8(v[off+n])
		off += n + 1
		comps = append(comps, c)
		if c.EOC != 0 {
			break
		}
	}
	if off != len(v) {
		return nil, static, valueErr(t, off, "expected the value to end after a non-zero end-of-component byte")
	}
	return comps, static, nil
}

// dynamicComparator reads a DynamicCompositeType component header: with
// the top bit set, the low byte is an alias; otherwise it is the length of
// a class name that follows.
func (t *Type) dynamicComparator(v []byte, off int) (*Type, string, int, error) {
	if len(v)-off < 2 {
		return nil, "", 0, valueErr(t, off, "expected a 2-byte component header, found %d bytes", len(v)-off)
	}
	h := binary.BigEndian.Uint16(v[off:])
	if h&0x8000 != 0 {
		a := byte(h)
		for i, al := range t.Aliases {
			if al == a {
				return t.Params[i], string(rune(a)), 2, nil
			}
		}
		return nil, "", 0, valueErr(t, off, "expected a declared alias, found %q", a)
	}
	n := int(h)
	if len(v)-off-2 < n {
		return nil, "", 0, valueErr(t, off, "expected a %d-byte class name, found %d bytes", n, len(v)-off-2)
	}
	name := string(v[off+2 : off+2+n])
	ct, err := Parse(name)
	if err != nil || ct.Kind == Composite || ct.Kind == DynamicComposite {
		return nil, "", 0, valueErr(t, off+2, "expected a simple type class name, found %q", name)
	}
	return ct, name, 2 + n, nil
}

// appendCompositeString is AbstractCompositeType.getString: components
// joined by ':' (each escaped), DynamicComposite ones prefixed "alias@",
// and ":_" or ":!" after a final component whose end-of-component byte is
// negative or positive.
func (t *Type) appendCompositeString(dst, v []byte) ([]byte, error) {
	comps, _, err := t.Components(v)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	var scratch []byte
	for i, c := range comps {
		if i > 0 {
			dst = append(dst, ':')
		}
		if t.Kind == DynamicComposite {
			dst = append(dst, c.Alias...)
			dst = append(dst, '@')
		}
		scratch, err = c.Type.AppendFormat(scratch[:0], c.Value)
		if err != nil {
			return dst[:start], err
		}
		// AbstractCompositeType.escape: ':' -> "\:", and a trailing '\'
		// or '!' gets a '!' appended.
		for _, b := range scratch {
			if b == ':' {
				dst = append(dst, '\\')
			}
			dst = append(dst, b)
		}
		if n := len(scratch); n > 0 && (scratch[n-1] == '\\' || scratch[n-1] == '!') {
			dst = append(dst, '!')
		}
		if c.EOC != 0 {
			if c.EOC < 0 {
				dst = append(dst, ":_"...)
			} else {
				dst = append(dst, ":!"...)
			}
		}
	}
	return dst, nil
}
