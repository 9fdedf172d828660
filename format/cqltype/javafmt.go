package cqltype

import (
	"math"
	"math/big"
	"strconv"
	"time"
)

// This file reproduces the text Java's standard library gives for numbers,
// dates and times, because sstabledump prints values with it.

// appendJavaFloat appends Java's Float.toString / Double.toString of f
// (bitSize 32 or 64): the shortest decimal that reads back as f, but at
// least two significant digits when one would do (JDK 19+ specification);
// plain notation for 1e-3 <= |f| < 1e7, otherwise "d.dddE±n".
func appendJavaFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf, dbuf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize)
	digits, exp := splitExp(dbuf[:0], s)
	if len(digits) == 1 {
		// Java picks the closest two-digit decimal when the shortest has
		// one digit (e.g. 4.9E-324 rather than 5E-324).
		s2 := strconv.AppendFloat(buf[:0], f, 'e', 1, bitSize)
		d2, e2 := splitExp(dbuf[1:1], s2)
		// Only a second digit other than 0 changes anything; check that
		// such a decimal still reads back as f (rare: subnormals).
		if d2[1] != '0' || e2 != exp {
			if back, err := strconv.ParseFloat(string(s2), bitSize); err == nil && back == f {
				digits, exp = d2, e2
			}
		}
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if exp >= -3 && exp < 7 {
		if exp < 0 {
			dst = append(dst, "0."...)
			for i := -1; i > exp; i-- {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		intLen := exp + 1
		if len(digits) <= intLen {
			dst = append(dst, digits...)
			for i := len(digits); i < intLen; i++ {
				dst = append(dst, '0')
			}
			return append(dst, ".0"...)
		}
		dst = append(dst, digits[:intLen]...)
		dst = append(dst, '.')
		return append(dst, digits[intLen:]...)
	}
	dst = append(dst, digits[0], '.')
	if len(digits) > 1 {
		dst = append(dst, digits[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// splitExp splits Go's "d.ddde±xx" into the digits without the point
// (appended to dst) and the decimal exponent of the first digit.
func splitExp(dst, s []byte) ([]byte, int) {
	e := len(s)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == 'e' {
			e = i
			break
		}
	}
	exp := 0
	neg := false
	for _, c := range s[min(e+1, len(s)):] {
		switch {
		case c == '-':
			neg = true
		case c >= '0' && c <= '9':
			exp = exp*10 + int(c-'0')
		}
	}
	if neg {
		exp = -exp
	}
	for _, c := range s[:e] {
		if c != '.' {
			dst = append(dst, c)
		}
	}
	return dst, exp
}

// twosComplement reads b as a big-endian two's-complement integer
// (Java's new BigInteger(byte[])).
func twosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// appendVarint appends Java's BigInteger.toString() of the two's-complement
// bytes, without big.Int when the value fits in an int64.
func appendVarint(dst, b []byte) []byte {
	// Drop redundant sign-extension bytes so short values take the fast path.
	for len(b) > 1 && ((b[0] == 0 && b[1]&0x80 == 0) || (b[0] == 0xFF && b[1]&0x80 != 0)) {
		b = b[1:]
	}
	if len(b) <= 8 {
		var v int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			v = -1
		}
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return strconv.AppendInt(dst, v, 10)
	}
	return twosComplement(b).Append(dst, 10)
}

// appendBigDecimal appends Java's BigDecimal.toString() of unscaled×10^-scale:
// plain notation when scale >= 0 and the adjusted exponent is >= -6,
// otherwise scientific ("1E-14", "1.5E+3").
func appendBigDecimal(dst []byte, unscaled []byte, scale int32) []byte {
	var buf [24]byte // fits any int64; longer coefficients grow it
	coeff := appendVarint(buf[:0], unscaled)
	neg := coeff[0] == '-'
	if neg {
		coeff = coeff[1:]
		dst = append(dst, '-')
	}
	adjusted := -int64(scale) + int64(len(coeff)-1)
	if scale >= 0 && adjusted >= -6 {
		sc := int(scale)
		switch {
		case sc == 0:
			return append(dst, coeff...)
		case len(coeff) > sc:
			dst = append(dst, coeff[:len(coeff)-sc]...)
			dst = append(dst, '.')
			return append(dst, coeff[len(coeff)-sc:]...)
		default:
			dst = append(dst, "0."...)
			for i := len(coeff); i < sc; i++ {
				dst = append(dst, '0')
			}
			return append(dst, coeff...)
		}
	}
	dst = append(dst, coeff[0])
	if len(coeff) > 1 {
		dst = append(dst, '.')
		dst = append(dst, coeff[1:]...)
	}
	if adjusted != 0 {
		dst = append(dst, 'E')
		if adjusted > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, adjusted, 10)
	}
	return dst
}

// UnixTime is the instant v units (a second or a fraction of one) after
// the epoch, split the way java.time splits it: seconds floored
// (Math.floorDiv), nanoseconds never negative. Every renderer of
// timestamps uses it.
func UnixTime(v int64, unit time.Duration) time.Time {
	per := int64(time.Second / unit)
	return time.Unix(FloorDiv(v, per), FloorMod(v, per)*int64(unit))
}

// FloorDiv is Java's Math.floorDiv: the quotient rounded toward negative
// infinity, as java.time splits instants.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// FloorMod is Java's Math.floorMod: never negative for a positive b.
func FloorMod(a, b int64) int64 { return a - FloorDiv(a, b)*b }

// CivilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date (astronomical year numbering).
func CivilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := FloorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// julianFromDays converts days since 1970-01-01 to a Julian-calendar date.
func julianFromDays(z int64) (y int64, m, d int) {
	j := z + 2440588 // Julian day number
	f := j + 1401
	e := 4*f + 3
	g := FloorMod(e, 1461) / 4
	h := 5*g + 2
	d = int(FloorMod(h, 153)/5 + 1)
	m = int(FloorMod(FloorDiv(h, 153)+2, 12) + 1)
	y = FloorDiv(e, 1461) - 4716 + FloorDiv(int64(12+2-m), 12)
	return y, m, d
}

// gregorianCutoverDay is 1582-10-15 in days since the epoch: java.util's
// GregorianCalendar (used by SimpleDateFormat) is Julian before it.
const gregorianCutoverDay = -141427

func appendPadded(dst []byte, v int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendSimpleDateFormat appends ms since the epoch formatted like Java's
// SimpleDateFormat("yyyy-MM-dd<sep>HH:mm:ss.SSSX") in UTC: hybrid
// Julian/Gregorian calendar, year of era (no sign for BC years), "Z".
func appendSimpleDateFormat(dst []byte, ms int64, sep byte) []byte {
	days := FloorDiv(ms, 86400000)
	msOfDay := FloorMod(ms, 86400000)
	var y int64
	var m, d int
	if days < gregorianCutoverDay {
		y, m, d = julianFromDays(days)
	} else {
		y, m, d = CivilFromDays(days)
	}
	if y <= 0 {
		y = 1 - y // year of era BC
	}
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, int64(m), 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, int64(d), 2)
	dst = append(dst, sep)
	dst = appendPadded(dst, msOfDay/3600000, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, msOfDay/60000%60, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, msOfDay/1000%60, 2)
	dst = append(dst, '.')
	dst = appendPadded(dst, msOfDay%1000, 3)
	return append(dst, 'Z')
}

// appendISOLocalDate appends a day count since the epoch the way
// DateTimeFormatter.ISO_LOCAL_DATE prints it: proleptic Gregorian, at least
// four year digits, '+' before years above 9999, '-' before negative ones.
func appendISOLocalDate(dst []byte, days int64) []byte {
	y, m, d := CivilFromDays(days)
	switch {
	case y > 9999:
		dst = append(dst, '+')
		dst = strconv.AppendInt(dst, y, 10)
	case y < 0:
		dst = append(dst, '-')
		dst = appendPadded(dst, -y, 4)
	default:
		dst = appendPadded(dst, y, 4)
	}
	dst = append(dst, '-')
	dst = appendPadded(dst, int64(m), 2)
	dst = append(dst, '-')
	return appendPadded(dst, int64(d), 2)
}

// appendJavaTime appends TimeSerializer.toString of nanoseconds since
// midnight ("HH:MM:SS.nnnnnnnnn"), reproducing its arithmetic exactly,
// including its odd output for values outside one day.
func appendJavaTime(dst []byte, v int64) []byte {
	nano := v % 1000
	v = (v - nano) / 1000
	micro := v % 1000
	v = (v - micro) / 1000
	milli := v % 1000
	v = (v - milli) / 1000
	seconds := v % 60
	v = (v - seconds) / 60
	minutes := v % 60
	v = (v - minutes) / 60
	hours := v % 24
	dst = leftPadZeros(dst, hours, 2)
	dst = append(dst, ':')
	dst = leftPadZeros(dst, minutes, 2)
	dst = append(dst, ':')
	dst = leftPadZeros(dst, seconds, 2)
	dst = append(dst, '.')
	dst = leftPadZeros(dst, milli, 3)
	dst = leftPadZeros(dst, micro, 3)
	return leftPadZeros(dst, nano, 3)
}

// leftPadZeros is TimeSerializer's padding: one '0' for each power of ten
// below the width that the value is smaller than (so negatives get zeros too).
func leftPadZeros(dst []byte, v int64, digits int) []byte {
	p := int64(1)
	for i := 1; i < digits; i++ {
		p *= 10
		if v < p {
			dst = append(dst, '0')
		}
	}
	return strconv.AppendInt(dst, v, 10)
}

const hexDigits = "0123456789abcdef"

func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// appendUUID appends the canonical lower-case 8-4-4-4-12 form of 16 bytes.
func appendUUID(dst, b []byte) []byte {
	dst = appendHex(dst, b[0:4])
	dst = append(dst, '-')
	dst = appendHex(dst, b[4:6])
	dst = append(dst, '-')
	dst = appendHex(dst, b[6:8])
	dst = append(dst, '-')
	dst = appendHex(dst, b[8:10])
	dst = append(dst, '-')
	return appendHex(dst, b[10:16])
}

// appendInet appends InetAddress.getHostAddress(): dotted quad for 4 bytes
// and for IPv4-mapped IPv6 (Java returns an Inet4Address for those), else
// eight uncompressed lower-case hex groups.
func appendInet(dst, b []byte) []byte {
	if len(b) == 16 {
		mapped := b[10] == 0xFF && b[11] == 0xFF
		for i := 0; i < 10 && mapped; i++ {
			mapped = b[i] == 0
		}
		if mapped {
			b = b[12:]
		}
	}
	if len(b) == 4 {
		for i, c := range b {
			if i > 0 {
				dst = append(dst, '.')
			}
			dst = strconv.AppendUint(dst, uint64(c), 10)
		}
		return dst
	}
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = strconv.AppendUint(dst, uint64(b[i])<<8|uint64(b[i+1]), 16)
	}
	return dst
}
