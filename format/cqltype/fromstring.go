package cqltype

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// FromString parses a value written the way AbstractType.fromString reads
// it — what users type for `dump -k` and `partitions` filters: text as is,
// numbers in decimal, uuids in canonical form, blobs in hex (0x optional),
// timestamps as milliseconds or RFC 3339, and composite (multi-column)
// partition keys as components joined by ':' (a literal ':' escaped as \:).
//
// It is also the inverse of Format (getString, what sstabledump prints for
// partition keys and collection cell paths): whatever Format prints for a
// valid value reads back to a value that Format prints the same way
// (FuzzFromStringInvertsFormat), including frozen collections (hex),
// tuples and UDTs ("a:b:@"), vectors ("[a, b]", of elements whose text
// holds no ", "), dates outside years 0..9999, times ("HH:MM:SS.nnnnnnnnn"),
// durations and Julian-calendar timestamps. An empty string is the empty
// value for the types whose empty value Format prints as "".
func (t *Type) FromString(s string) ([]byte, error) {
	return t.appendFromString(nil, s)
}

func (t *Type) appendFromString(dst []byte, s string) ([]byte, error) {
	switch t.Kind {
	case Ascii, Text:
		return append(dst, s...), nil
	case Empty:
		if s != "" {
			return dst, fmt.Errorf("%q is not empty", s)
		}
		return dst, nil
	case Blob, List, Set, Map:
		h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
		out, ok := appendHexDecoded(dst, h)
		if !ok {
			return dst, fmt.Errorf("%q is not hex", s)
		}
		return out, nil
	case Custom:
		if t.impl == "LexicalUUIDType" {
			if s == "" {
				return dst, nil
			}
			return appendUUIDText(dst, s)
		}
		out, ok := appendHexDecoded(dst, strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
		if !ok {
			return dst, fmt.Errorf("%q is not hex", s)
		}
		return out, nil
	case Tuple, UDT:
		return t.appendTupleFromString(dst, s)
	case Vector:
		return t.appendVectorFromString(dst, s)
	case Composite, DynamicComposite:
		return t.appendCompositeFromString(dst, s)
	case Boolean:
		switch strings.ToLower(s) {
		case "true":
			return append(dst, 1), nil
		case "false":
			return append(dst, 0), nil
		case "":
			return dst, nil
		}
		return dst, fmt.Errorf("%q is not a boolean", s)
	}
	if s == "" {
		// Format prints the empty value of the remaining types as "";
		// tinyint, smallint, date and time refuse to print one.
		return dst, nil
	}
	switch t.Kind {
	case Int, SmallInt, TinyInt, Bigint, Counter:
		bits := map[Kind]int{Int: 32, SmallInt: 16, TinyInt: 8, Bigint: 64, Counter: 64}[t.Kind]
		v, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return dst, fmt.Errorf("%q is not a %d-bit integer", s, bits)
		}
		return appendBigEndian(dst, uint64(v), bits/8), nil
	case Time:
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return binary.BigEndian.AppendUint64(dst, uint64(v)), nil
		}
		v, ok := parseJavaTime(s)
		if !ok {
			return dst, fmt.Errorf("%q is not a time (HH:MM:SS.nnnnnnnnn, or nanoseconds)", s)
		}
		return binary.BigEndian.AppendUint64(dst, uint64(v)), nil
	case Varint:
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return dst, fmt.Errorf("%q is not an integer", s)
		}
		return append(dst, VarintBytes(v)...), nil
	case Decimal:
		unscaled, scale, ok := parseBigDecimal(s)
		if !ok {
			return dst, fmt.Errorf("%q is not a decimal", s)
		}
		dst = binary.BigEndian.AppendUint32(dst, uint32(scale))
		return append(dst, VarintBytes(unscaled)...), nil
	case Float, Double:
		bits := 64
		if t.Kind == Float {
			bits = 32
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil || strings.ContainsAny(s, "xXpP_") {
			return dst, fmt.Errorf("%q is not a number", s)
		}
		if bits == 32 {
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case UUID, TimeUUID:
		return appendUUIDText(dst, s)
	case Timestamp:
		if ms, ok := parseSimpleDateFormat(s, 'T'); ok {
			return binary.BigEndian.AppendUint64(dst, uint64(ms)), nil
		}
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
			return binary.BigEndian.AppendUint64(dst, uint64(ms)), nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05-0700", "2006-01-02T15:04:05-0700", "2006-01-02"} {
			if tm, err := time.Parse(layout, s); err == nil {
				return binary.BigEndian.AppendUint64(dst, uint64(tm.UnixMilli())), nil
			}
		}
		return dst, fmt.Errorf("%q is not a timestamp (milliseconds or RFC 3339)", s)
	case Date:
		days, ok := parseISOLocalDate(s)
		if !ok || days != int64(int32(days)) {
			return dst, fmt.Errorf("%q is not a date (yyyy-mm-dd)", s)
		}
		return binary.BigEndian.AppendUint32(dst, uint32(days+(1<<31))), nil
	case Inet:
		ip := net.ParseIP(s)
		if ip == nil {
			return dst, fmt.Errorf("%q is not an IP address", s)
		}
		if v4 := ip.To4(); v4 != nil {
			return append(dst, v4...), nil
		}
		return append(dst, ip...), nil
	case Duration:
		months, days, nanos, ok := parseDuration(s)
		if !ok {
			return dst, fmt.Errorf("%q is not a duration (such as 1y2mo3d4h5m6s7ms8us9ns)", s)
		}
		dst = vint.AppendSigned(dst, months)
		dst = vint.AppendSigned(dst, days)
		return vint.AppendSigned(dst, nanos), nil
	}
	return dst, fmt.Errorf("cannot parse a %s value from text; give it as hex with --hex-key", t.CQL())
}

// VarintBytes is a varint value as Cassandra stores it, BigInteger.toByteArray:
// the shortest big-endian two's-complement bytes of v (one zero byte for 0).
func VarintBytes(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -v-1 in bytes, inverted.
	m := new(big.Int).Neg(v)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

// appendUUIDText reads the 8-4-4-4-12 hex form (dashes optional).
func appendUUIDText(dst []byte, s string) ([]byte, error) {
	out, ok := appendHexDecoded(dst, strings.ReplaceAll(s, "-", ""))
	if !ok || len(out)-len(dst) != 16 {
		return dst, fmt.Errorf("%q is not a UUID", s)
	}
	return out, nil
}

// splitUnescaped splits s at each sep not preceded by a backslash,
// keeping the escapes (each part is unescaped by its reader).
func splitUnescaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unescape drops the backslash before each escaped byte.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}

// appendTupleFromString reads TupleType.getString's text: fields joined by
// ':', '@' for null, ':' and '@' inside a field escaped with '\'. Fields
// past the text's are absent (the value ends early), as Format prints a
// value shorter than its type.
func (t *Type) appendTupleFromString(dst []byte, s string) ([]byte, error) {
	if s == "" && len(t.Params) > 0 {
		// A value of no fields; one empty first field prints the same.
		return dst, nil
	}
	parts := splitUnescaped(s, ':')
	if len(parts) > len(t.Params) {
		return dst, fmt.Errorf("%q has %d fields, the type %d", s, len(parts), len(t.Params))
	}
	for i, p := range parts {
		if p == "@" {
			dst = appendElem(dst, nil, true)
			continue
		}
		v, err := t.Params[i].appendFromString(nil, unescape(p))
		if err != nil {
			return dst, fmt.Errorf("field %d: %w", i, err)
		}
		dst = appendElem(dst, v, false)
	}
	return dst, nil
}

// appendVectorFromString reads VectorSerializer.toString's "[e1, e2]".
// Elements are split at ", ", so an element whose text holds one (a text
// vector's) cannot be read back.
func (t *Type) appendVectorFromString(dst []byte, s string) ([]byte, error) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return dst, fmt.Errorf("%q is not a vector ([e1, e2, ...])", s)
	}
	parts := strings.Split(s[1:len(s)-1], ", ")
	if len(parts) != t.Dimension {
		return dst, fmt.Errorf("%q has %d elements, the type %d", s, len(parts), t.Dimension)
	}
	elem := t.Params[0]
	if elem.Kind == List || elem.Kind == Set || elem.Kind == Map || elem.FixedLength() == 0 {
		return dst, fmt.Errorf("cannot read a %s value from text", t.CQL())
	}
	for i, p := range parts {
		v, err := elem.appendFromString(nil, p)
		if err != nil {
			return dst, fmt.Errorf("element %d: %w", i, err)
		}
		if w := elem.FixedLength(); w > 0 {
			if len(v) != w {
				return dst, fmt.Errorf("element %d: expected %d bytes, found %d", i, w, len(v))
			}
		} else {
			dst = vint.AppendUnsigned(dst, uint64(len(v)))
		}
		dst = append(dst, v...)
	}
	return dst, nil
}

// appendCompositeFromString reads AbstractCompositeType.getString's text:
// components joined by ':' (a ':' inside one escaped as "\:", a trailing
// '\' or '!' followed by '!'), DynamicComposite ones as "alias@value", and
// a last ":_" or ":!" for an end-of-component byte of -1 or 1.
func (t *Type) appendCompositeFromString(dst []byte, s string) ([]byte, error) {
	if s == "" {
		// No component (one empty component prints the same).
		return dst, nil
	}
	parts := splitComposite(s)
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		var ct *Type
		var alias string
		if t.Kind == DynamicComposite {
			a, rest, ok := strings.Cut(p, "@")
			if !ok {
				return dst, fmt.Errorf("component %d of %q names no type (alias@value)", i, s)
			}
			alias, p = a, rest
			if ct = t.dynamicAlias(alias); ct == nil {
				return dst, fmt.Errorf("component %d of %q: unknown type %q", i, s, alias)
			}
		} else {
			if i >= len(t.Params) {
				return dst, fmt.Errorf("%q has %d components, the composite type has %d", s, len(parts), len(t.Params))
			}
			ct = t.Params[i]
		}
		eoc := byte(0)
		if i+1 < len(parts) && (parts[i+1] == "_" || parts[i+1] == "!") && i+2 == len(parts) {
			eoc = map[string]byte{"_": 0xFF, "!": 1}[parts[i+1]]
			parts = parts[:i+1]
		}
		// Undo escape: "\:" is ':', and a '!' after a trailing '\' or '!'
		// was added.
		text := strings.ReplaceAll(p, `\:`, ":")
		if n := len(text); n >= 2 && text[n-1] == '!' && (text[n-2] == '\\' || text[n-2] == '!') {
			text = text[:n-1]
		}
		v, err := ct.appendFromString(nil, text)
		if err != nil {
			return dst, fmt.Errorf("component %d: %w", i, err)
		}
		if len(v) > 0xFFFF {
			return dst, fmt.Errorf("component %d is longer than 65535 bytes", i)
		}
		if t.Kind == DynamicComposite {
			if len(alias) == 1 && t.aliasIndex(alias[0]) >= 0 {
				dst = append(dst, 0x80, alias[0])
			} else {
				dst = binary.BigEndian.AppendUint16(dst, uint16(len(alias)))
				dst = append(dst, alias...)
			}
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(v)))
		dst = append(dst, v...)
		dst = append(dst, eoc)
	}
	return dst, nil
}

// splitComposite splits at each ':' that "\:" does not escape.
func splitComposite(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == ':' {
			i++
			continue
		}
		if s[i] == ':' {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func (t *Type) aliasIndex(a byte) int {
	for i, al := range t.Aliases {
		if al == a {
			return i
		}
	}
	return -1
}

// dynamicAlias is the type a DynamicComposite component names: a declared
// alias, or a class name.
func (t *Type) dynamicAlias(alias string) *Type {
	if len(alias) == 1 {
		if i := t.aliasIndex(alias[0]); i >= 0 {
			return t.Params[i]
		}
	}
	ct, err := Parse(alias)
	if err != nil || ct.Kind == Composite || ct.Kind == DynamicComposite {
		return nil
	}
	return ct
}

// parseBigDecimal is new BigDecimal(String): an optional sign, digits with
// an optional point, an optional exponent; the scale is the number of
// digits after the point less the exponent.
func parseBigDecimal(s string) (*big.Int, int32, bool) {
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		es := strings.TrimPrefix(s[i+1:], "+")
		e, err := strconv.ParseInt(es, 10, 64)
		if err != nil || es == "" || es[0] == '+' {
			return nil, 0, false
		}
		mant, exp = s[:i], e
	}
	sign := ""
	switch {
	case strings.HasPrefix(mant, "-"):
		sign, mant = "-", mant[1:]
	case strings.HasPrefix(mant, "+"):
		mant = mant[1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	if digits == "" {
		return nil, 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return nil, 0, false
		}
	}
	u, ok := new(big.Int).SetString(sign+digits, 10)
	if !ok {
		return nil, 0, false
	}
	scale := int64(len(frac)) - exp
	if scale != int64(int32(scale)) {
		return nil, 0, false
	}
	return u, int32(scale), true
}

// atoiN reads exactly the digits of s (no sign), at most 18 of them.
func atoiN(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}

// DaysFromCivil is the inverse of CivilFromDays: days since 1970-01-01 of
// a proleptic Gregorian date (astronomical year numbering).
func DaysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := FloorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// daysFromJulian is the inverse of julianFromDays.
func daysFromJulian(y int64, m, d int) int64 {
	a := int64((14 - m) / 12)
	yy := y + 4800 - a
	mm := int64(m) + 12*a - 3
	jdn := int64(d) + (153*mm+2)/5 + 365*yy + FloorDiv(yy, 4) - 32083
	return jdn - 2440588
}

// parseDate reads "y-MM-dd" with a year of at least four digits, and
// returns the fields; the caller checks them against its calendar.
func parseDateFields(s string) (y int64, m, d int, ok bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	}
	if len(s) < 10 || s[len(s)-3] != '-' || s[len(s)-6] != '-' {
		return 0, 0, 0, false
	}
	ys := s[:len(s)-6]
	if len(ys) < 4 {
		return 0, 0, 0, false
	}
	y, ok1 := atoiN(ys)
	mm, ok2 := atoiN(s[len(s)-5 : len(s)-3])
	dd, ok3 := atoiN(s[len(s)-2:])
	if !ok1 || !ok2 || !ok3 || mm < 1 || mm > 12 || dd < 1 || dd > 31 {
		return 0, 0, 0, false
	}
	if neg {
		y = -y
	}
	return y, int(mm), int(dd), true
}

// parseISOLocalDate reads appendISOLocalDate's text into days since the epoch.
func parseISOLocalDate(s string) (int64, bool) {
	y, m, d, ok := parseDateFields(s)
	if !ok {
		return 0, false
	}
	if (y > 9999) != strings.HasPrefix(s, "+") {
		return 0, false
	}
	days := DaysFromCivil(y, m, d)
	if y2, m2, d2 := CivilFromDays(days); y2 != y || m2 != m || d2 != d {
		return 0, false
	}
	return days, true
}

// parseSimpleDateFormat reads appendSimpleDateFormat's text
// ("yyyy-MM-dd<sep>HH:mm:ss.SSSZ") into milliseconds since the epoch: a
// Gregorian date from 1582-10-15 on, Julian before; the year is of the
// common era (the text has no era).
func parseSimpleDateFormat(s string, sep byte) (int64, bool) {
	const tail = len("THH:mm:ss.SSSZ")
	if len(s) < 10+tail || s[len(s)-1] != 'Z' {
		return 0, false
	}
	date, clock := s[:len(s)-tail], s[len(s)-tail:]
	if clock[0] != sep || clock[3] != ':' || clock[6] != ':' || clock[9] != '.' || strings.HasPrefix(date, "+") || strings.HasPrefix(date, "-") {
		return 0, false
	}
	y, m, d, ok := parseDateFields(date)
	if !ok || y < 1 {
		return 0, false
	}
	ms, ok := simpleDateFormatMillis(y, m, d, clock)
	if !ok && y < gregorianCutoverYear {
		// The year of era of a year before the common era (whose leap
		// years are not those of the same number after it).
		ms, ok = simpleDateFormatMillis(1-y, m, d, clock)
	}
	return ms, ok
}

// gregorianCutoverYear is the year of gregorianCutoverDay.
const gregorianCutoverYear = 1582

// simpleDateFormatMillis is parseSimpleDateFormat's instant for an
// astronomical year and the text of the time of day.
func simpleDateFormatMillis(y int64, m, d int, clock string) (int64, bool) {
	hh, ok1 := atoiN(clock[1:3])
	mi, ok2 := atoiN(clock[4:6])
	ss, ok3 := atoiN(clock[7:9])
	ms, ok4 := atoiN(clock[10:13])
	if !ok1 || !ok2 || !ok3 || !ok4 || hh > 23 || mi > 59 || ss > 59 {
		return 0, false
	}
	days := DaysFromCivil(y, m, d)
	if days < gregorianCutoverDay {
		days = daysFromJulian(y, m, d)
		if y2, m2, d2 := julianFromDays(days); y2 != y || m2 != m || d2 != d || days >= gregorianCutoverDay {
			return 0, false
		}
	} else if y2, m2, d2 := CivilFromDays(days); y2 != y || m2 != m || d2 != d {
		return 0, false
	}
	const msPerDay = 86400000
	if days > math.MaxInt64/msPerDay-1 || days < math.MinInt64/msPerDay+1 {
		return 0, false
	}
	return days*msPerDay + hh*3600000 + mi*60000 + ss*1000 + ms, true
}

// parseJavaTime reads appendJavaTime's "HH:MM:SS.nnnnnnnnn" (a time of day).
func parseJavaTime(s string) (int64, bool) {
	if len(s) != 18 || s[2] != ':' || s[5] != ':' || s[8] != '.' {
		return 0, false
	}
	h, ok1 := atoiN(s[0:2])
	m, ok2 := atoiN(s[3:5])
	sec, ok3 := atoiN(s[6:8])
	n, ok4 := atoiN(s[9:18])
	if !ok1 || !ok2 || !ok3 || !ok4 || h > 23 || m > 59 || sec > 59 {
		return 0, false
	}
	return ((h*60+m)*60+sec)*1_000_000_000 + n, true
}

// parseDuration reads Duration.toString's text: an optional '-', then
// numbers with the units y, mo, d, h, m, s, ms, us (or µs) and ns, each
// at most once and in that order.
func parseDuration(s string) (months, days, nanos int64, ok bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if s == "" {
		return 0, 0, 0, false
	}
	units := []struct {
		name   string
		field  int // 0 months, 1 days, 2 nanoseconds
		factor int64
	}{{"y", 0, 12}, {"mo", 0, 1}, {"d", 1, 1}, {"h", 2, 3600_000_000_000}, {"m", 2, 60_000_000_000},
		{"s", 2, 1_000_000_000}, {"ms", 2, 1_000_000}, {"us", 2, 1_000}, {"µs", 2, 1_000}, {"ns", 2, 1}}
	var f [3]int64
	next := 0
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		n, ok := atoiN(s[:i])
		if !ok {
			return 0, 0, 0, false
		}
		s = s[i:]
		j := 0
		for j < len(s) && (s[j] < '0' || s[j] > '9') {
			j++
		}
		unit := s[:j]
		s = s[j:]
		found := false
		for k := next; k < len(units); k++ {
			if units[k].name == unit {
				u := units[k]
				if n > (math.MaxInt64-f[u.field])/u.factor {
					return 0, 0, 0, false
				}
				f[u.field] += n * u.factor
				next, found = k+1, true
				break
			}
		}
		if !found {
			return 0, 0, 0, false
		}
	}
	limit := int64(math.MaxInt32)
	if neg {
		limit++ // Integer.MIN_VALUE months or days
	}
	if f[0] > limit || f[1] > limit {
		return 0, 0, 0, false
	}
	if neg {
		f[0], f[1], f[2] = -f[0], -f[1], -f[2]
	}
	return f[0], f[1], f[2], true
}
