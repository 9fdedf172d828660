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
				dst = appendTimestampFast(dst, int64(binary.BigEndian.Uint64(v)), ' ')
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
				if out, ok := appendDoubleFast(dst, f); ok {
					return out, nil
				}
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

// CachingJSONAppender is JSONAppender with timestamps going through a
// cache of their last second, for a renderer that meets runs of nearby
// instants (a dump's clustering and cells). Unlike the other Appenders it
// is not safe for concurrent use: each renderer makes its own.
func (t *Type) CachingJSONAppender() Appender {
	app := t.JSONAppender()
	if t.Kind != Timestamp {
		return app
	}
	var c struct {
		sec    int64
		prefix [20]byte
		ok     bool
	}
	return func(dst, v []byte) ([]byte, error) {
		if len(v) != 8 {
			return app(dst, v)
		}
		ms := int64(binary.BigEndian.Uint64(v))
		sec, milli := FloorDiv(ms, 1000), FloorMod(ms, 1000)
		if !c.ok || c.sec != sec {
			start := len(dst)
			out, err := app(dst, v)
			// `"yyyy-MM-dd HH:mm:ss.SSSZ"`: within one second only SSS,
			// the milliseconds, changes. Other shapes are not cached.
			if text := out[start:]; err == nil && len(text) == 26 && text[20] == '.' && text[24] == 'Z' {
				copy(c.prefix[:], text)
				c.sec, c.ok = sec, true
			}
			return out, err
		}
		dst = append(dst, c.prefix[:]...)
		return append(dst, '.', byte('0'+milli/100), Digits2[2*(milli%100)], Digits2[2*(milli%100)+1], 'Z', '"'), nil
	}
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
				dst = appendTimestampFast(dst, int64(binary.BigEndian.Uint64(v)), 'T')
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

// appendTimestampFast is appendSimpleDateFormat for the instants from
// the Gregorian cutover (1582-10-15) to the end of year 9999, with the
// digits taken two at a time from a table; others go the general way.
func appendTimestampFast(dst []byte, ms int64, sep byte) []byte {
	const minMS, maxMS = gregorianCutoverDay * 86400000, 253402300799999
	if ms < minMS || ms > maxMS {
		return appendSimpleDateFormat(dst, ms, sep)
	}
	days, msOfDay := FloorDiv(ms, 86400000), FloorMod(ms, 86400000)
	y, m, d := CivilFromDays(days)
	s, milli := msOfDay/1000, msOfDay%1000
	hh, mm, ss := s/3600, s/60%60, s%60
	yh, yl := y/100, y%100
	return append(dst,
		Digits2[2*yh], Digits2[2*yh+1], Digits2[2*yl], Digits2[2*yl+1], '-',
		Digits2[2*m], Digits2[2*m+1], '-', Digits2[2*d], Digits2[2*d+1], sep,
		Digits2[2*hh], Digits2[2*hh+1], ':', Digits2[2*mm], Digits2[2*mm+1], ':', Digits2[2*ss], Digits2[2*ss+1], '.',
		byte('0'+milli/100), Digits2[2*(milli%100)], Digits2[2*(milli%100)+1], 'Z')
}

// Digits2 holds the decimal pairs 00..99, two bytes each, for renderers of dates and times
// (here and in export) that format without strconv.
const Digits2 = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// pow10 holds the powers of ten a float64 represents exactly, up to the
// largest appendDoubleFast scales by.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17}

// scaleForExp gives, for a binary exponent e of a plain-notation double
// (1e-3 <= a < 1e7, so -10 <= e <= 23), the largest k with 10^k <= 2^(49-e).
const minScaleExp = -10

var scaleForExp = func() (t [34]int) {
	for i := range t {
		e := i + minScaleExp
		k := 0
		for k+1 < len(pow10) && pow10[k+1] <= math.Ldexp(1, 49-e) {
			k++
		}
		t[i] = k
	}
	return t
}()

// appendDoubleFast is appendJavaFloat for a finite double of plain
// notation (1e-3 <= |f| < 1e7) that some decimal of at most K fraction
// digits reads back as, where K is the largest with 10^K <= 2^(49-e) for
// f's binary exponent e, so that |f|·10^K < 2^50 (any decimal of up to
// about 14 significant digits). It reports false, having appended
// nothing, for other values, and for one-digit decimals, where Java's
// two-digit rule applies.
//
// Why this is exact. Scaled by 10^K, every decimal of at most K fraction
// digits that reads back as f lies within 2^50·2^-53 of f·10^K, and the
// rounded product adds at most as much: so x = round(f·10^K) is that
// decimal scaled, and there is at most one. x with its trailing zeros
// stripped is then the shortest decimal, the one Java prints; whether it
// reads back as f is checked by one division, which, with n and 10^k
// exact, rounds as parsing the decimal does.
func appendDoubleFast(dst []byte, f float64) ([]byte, bool) {
	a := math.Abs(f)
	if !(a >= 1e-3 && a < 1e7) {
		return dst, false
	}
	// a < 2^(e+1), so 10^k <= 2^(49-e) keeps a·10^k below 2^50.
	e := int(math.Float64bits(a)>>52&0x7FF) - 1023
	k := scaleForExp[e-minScaleExp]
	n := uint64(math.Round(a * pow10[k]))
	for k >= 4 && n%10000 == 0 {
		n /= 10000
		k -= 4
	}
	for k > 0 && n%10 == 0 {
		n /= 10
		k--
	}
	if float64(n)/pow10[k] != a || n < 10 {
		return dst, false
	}
	m := n
	for m%10 == 0 {
		m /= 10
	}
	if m < 10 {
		return dst, false // one significant digit
	}
	// The digits of n, then the point k digits from the right.
	var buf [24]byte
	i := len(buf)
	for n >= 100 {
		q := n / 100
		d := 2 * (n - q*100)
		i -= 2
		buf[i], buf[i+1] = Digits2[d], Digits2[d+1]
		n = q
	}
	if n >= 10 {
		i -= 2
		buf[i], buf[i+1] = Digits2[2*n], Digits2[2*n+1]
	} else {
		i--
		buf[i] = byte('0' + n)
	}
	digits := buf[i:]
	if f < 0 {
		dst = append(dst, '-')
	}
	switch {
	case k == 0:
		dst = append(dst, digits...)
		return append(dst, '.', '0'), true
	case k >= len(digits):
		dst = append(dst, '0', '.')
		for j := len(digits); j < k; j++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...), true
	}
	dst = append(dst, digits[:len(digits)-k]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-k:]...), true
}
