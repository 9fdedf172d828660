package cqltype

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

// An Appender appends the rendering of one value to dst. The Appenders a
// Type returns give exactly what the method they stand for gives (output
// and errors), but decide on the type once, when they are made, and take
// the common types (text, ascii, blob, integers, booleans, floats,
// timestamps, UUIDs) without going through the general switch: a dump
// calls one per cell. They are safe for concurrent use.
type Appender func(dst, v []byte) ([]byte, error)

// JSONAppender returns an Appender equivalent to t.AppendJSON.
func (t *Type) JSONAppender() Appender {
	switch t.Kind {
	case Text:
		return func(dst, v []byte) ([]byte, error) {
			if out, ok := appendTextJSON(dst, v); ok {
				return out, nil
			}
			return t.AppendJSON(dst, v)
		}
	case Ascii:
		return func(dst, v []byte) ([]byte, error) {
			if out, ok := appendASCIIJSON(dst, v); ok {
				return out, nil
			}
			return t.AppendJSON(dst, v)
		}
	case Blob:
		return func(dst, v []byte) ([]byte, error) {
			dst = append(dst, `"0x`...)
			dst = appendHex(dst, v)
			return append(dst, '"'), nil
		}
	case Boolean, TinyInt, SmallInt, Int, Bigint:
		width := map[Kind]int{Boolean: 1, TinyInt: 1, SmallInt: 2, Int: 4, Bigint: 8}[t.Kind]
		kind := t.Kind
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == width {
				return appendFixedInt(dst, kind, v), nil
			}
			return t.AppendJSON(dst, v)
		}
	case Timestamp:
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == 8 {
				dst = append(dst, '"')
				dst = appendSimpleDateFormat(dst, int64(binary.BigEndian.Uint64(v)), ' ')
				return append(dst, '"'), nil
			}
			return t.AppendJSON(dst, v)
		}
	case UUID, TimeUUID:
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == 16 {
				dst = append(dst, '"')
				dst = appendUUID(dst, v)
				return append(dst, '"'), nil
			}
			return t.AppendJSON(dst, v)
		}
	case Double:
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == 8 {
				f := math.Float64frombits(binary.BigEndian.Uint64(v))
				if !math.IsNaN(f) && !math.IsInf(f, 0) {
					return appendJavaFloat(dst, f, 64), nil
				}
			}
			return t.AppendJSON(dst, v)
		}
	case Float:
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == 4 {
				f := float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
				if !math.IsNaN(f) && !math.IsInf(f, 0) {
					return appendJavaFloat(dst, f, 32), nil
				}
			}
			return t.AppendJSON(dst, v)
		}
	}
	return t.AppendJSON
}

// StringJSONAppender returns an Appender equivalent to formatting a value
// with t.AppendFormat and appending the text with AppendJSONString: what
// sstabledump prints for partition key components and cell paths.
func (t *Type) StringJSONAppender() Appender {
	switch t.Kind {
	case Text:
		return func(dst, v []byte) ([]byte, error) {
			if out, ok := appendTextJSON(dst, v); ok {
				return out, nil
			}
			return t.appendStringJSON(dst, v)
		}
	case Ascii:
		return func(dst, v []byte) ([]byte, error) {
			if out, ok := appendASCIIJSON(dst, v); ok {
				return out, nil
			}
			return t.appendStringJSON(dst, v)
		}
	case Blob:
		return func(dst, v []byte) ([]byte, error) {
			dst = append(dst, '"')
			dst = appendHex(dst, v)
			return append(dst, '"'), nil
		}
	case Boolean, TinyInt, SmallInt, Int, Bigint:
		width := map[Kind]int{Boolean: 1, TinyInt: 1, SmallInt: 2, Int: 4, Bigint: 8}[t.Kind]
		kind := t.Kind
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == width {
				dst = append(dst, '"')
				dst = appendFixedInt(dst, kind, v)
				return append(dst, '"'), nil
			}
			return t.appendStringJSON(dst, v)
		}
	case Timestamp:
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == 8 {
				dst = append(dst, '"')
				dst = appendSimpleDateFormat(dst, int64(binary.BigEndian.Uint64(v)), 'T')
				return append(dst, '"'), nil
			}
			return t.appendStringJSON(dst, v)
		}
	case UUID, TimeUUID:
		return func(dst, v []byte) ([]byte, error) {
			if len(v) == 16 {
				dst = append(dst, '"')
				dst = appendUUID(dst, v)
				return append(dst, '"'), nil
			}
			return t.appendStringJSON(dst, v)
		}
	}
	return t.appendStringJSON
}

// appendStringJSON is AppendJSONString(AppendFormat(v)) without a scratch
// buffer: the text is formatted in place after the opening quote and only
// copied when it needs escaping.
func (t *Type) appendStringJSON(dst, v []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, '"')
	out, err := t.AppendFormat(dst, v)
	if err != nil {
		return dst[:start], err
	}
	text := out[start+1:]
	for _, c := range text {
		if !jsonSafe[c] && c < 0x80 {
			escaped := appendJSONEscaped(nil, text)
			out = append(out[:start+1], escaped...)
			break
		}
	}
	return append(out, '"'), nil
}

// jsonSafe marks the ASCII bytes a JSON string holds as they are: not
// control characters, '"' or '\\'. Bytes from 0x80 are false: they need a
// UTF-8 check, not escaping.
var jsonSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendTextJSON quotes valid UTF-8 as AppendJSON does for text; ok is
// false (and dst unchanged) when v is not valid UTF-8.
func appendTextJSON(dst, v []byte) ([]byte, bool) {
	i := safePrefix(v)
	if i == len(v) {
		dst = append(dst, '"')
		dst = append(dst, v...)
		return append(dst, '"'), true
	}
	if !utf8.Valid(v[i:]) {
		return dst, false
	}
	return appendJSONQuoted(dst, v), true
}

// appendASCIIJSON is appendTextJSON for ascii: ok is false for a byte
// from 0x80.
func appendASCIIJSON(dst, v []byte) ([]byte, bool) {
	i := safePrefix(v)
	if i == len(v) {
		dst = append(dst, '"')
		dst = append(dst, v...)
		return append(dst, '"'), true
	}
	for _, c := range v[i:] {
		if c >= 0x80 {
			return dst, false
		}
	}
	return appendJSONQuoted(dst, v), true
}

// safePrefix returns how many leading bytes of v need neither escaping nor
// a UTF-8 check, testing eight at a time.
func safePrefix(v []byte) int {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(v); i += 8 {
		x := binary.LittleEndian.Uint64(v[i:])
		// A byte is flagged when its top bit is set, when it is below
		// 0x20, or when it equals '"' or '\\' (the classic "has zero
		// byte" test on x-0x20 and on x xor each quote character).
		q := x ^ (lo * '"')
		b := x ^ (lo * '\\')
		bad := x | ((x - lo*0x20) & ^x) | ((q - lo) & ^q) | ((b - lo) & ^b)
		if bad&hi != 0 {
			break
		}
	}
	for ; i < len(v) && jsonSafe[v[i]]; i++ {
	}
	return i
}

// appendFixedInt renders a boolean or fixed-width integer of its exact width.
func appendFixedInt(dst []byte, k Kind, v []byte) []byte {
	switch k {
	case Boolean:
		if v[0] != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case TinyInt:
		return strconv.AppendInt(dst, int64(int8(v[0])), 10)
	case SmallInt:
		return strconv.AppendInt(dst, int64(int16(binary.BigEndian.Uint16(v))), 10)
	case Int:
		return strconv.AppendInt(dst, int64(int32(binary.BigEndian.Uint32(v))), 10)
	}
	return strconv.AppendInt(dst, int64(binary.BigEndian.Uint64(v)), 10)
}
