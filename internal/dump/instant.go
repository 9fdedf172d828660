package dump

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// instant renders like java.time.Instant.toString: fractions only when
// non-zero, in groups of three digits. appendInstant is its fast form;
// this one stays for years outside 0..9999 and as the reference.
func instant(unit time.Duration, v int64) string {
	t := cqltype.UnixTime(v, unit).UTC()
	nanos := int64(t.Nanosecond())
	s := t.Format("2006-01-02T15:04:05")
	if y := t.Year(); y > 9999 || y < 0 {
		s = fmt.Sprintf("%+d", y) + t.Format("-01-02T15:04:05")
	}
	switch {
	case nanos == 0:
	case nanos%1_000_000 == 0:
		s += fmt.Sprintf(".%03d", nanos/1_000_000)
	case nanos%1000 == 0:
		s += fmt.Sprintf(".%06d", nanos/1000)
	default:
		s += fmt.Sprintf(".%09d", nanos)
	}
	return s + "Z"
}

// dateCache remembers the text of the last second rendered
// ("2023-11-14T22:13:20") and the day it fell on: the timestamps of one
// sstable mostly fall within a few days, often within seconds. A renderer
// keeps one for timestamps and one for deletion and expiration times,
// which fall on other days.
type dateCache struct {
	secs, day int64
	text      [19]byte
	secsOK    bool
	dayOK     bool
}

// appendDate appends a timestamp (unit µs) or a local deletion or
// expiration time (unit s) as a JSON string: instant's text, or the number
// with -t.
func (r *renderer) appendDate(dst []byte, micros bool, v int64) []byte {
	dst = append(dst, '"')
	if r.raw {
		dst = appendInt(dst, v)
		return append(dst, '"')
	}
	secs, frac := v, int64(0)
	c := &r.dates[0]
	if micros {
		secs, frac = cqltype.FloorDiv(v, 1_000_000), cqltype.FloorMod(v, 1_000_000)
		c = &r.dates[1]
	}
	if !c.secsOK || c.secs != secs {
		// Days from 0000-01-01 to 9999-12-31 print with four year
		// digits; others take the general path.
		const minSecs, maxSecs = -62167219200, 253402300799
		if secs < minSecs || secs > maxSecs {
			unit := time.Second
			if micros {
				unit = time.Microsecond
			}
			dst = append(dst, instant(unit, v)...)
			return append(dst, '"')
		}
		day, sod := cqltype.FloorDiv(secs, 86400), cqltype.FloorMod(secs, 86400)
		t := &c.text
		if !c.dayOK || c.day != day {
			y, m, d := civil(day)
			t[0], t[1], t[2], t[3] = digits2[2*(y/100)], digits2[2*(y/100)+1], digits2[2*(y%100)], digits2[2*(y%100)+1]
			t[4], t[5], t[6], t[7] = '-', digits2[2*m], digits2[2*m+1], '-'
			t[8], t[9], t[10] = digits2[2*d], digits2[2*d+1], 'T'
			c.day, c.dayOK = day, true
		}
		h, mi, s := sod/3600, sod/60%60, sod%60
		t[11], t[12], t[13] = digits2[2*h], digits2[2*h+1], ':'
		t[14], t[15], t[16] = digits2[2*mi], digits2[2*mi+1], ':'
		t[17], t[18] = digits2[2*s], digits2[2*s+1]
		c.secs, c.secsOK = secs, true
	}
	dst = append(dst, c.text[:]...)
	switch {
	case frac == 0:
	case frac%1000 == 0:
		ms := frac / 1000
		dst = append(dst, '.', byte('0'+ms/100), digits2[2*(ms%100)], digits2[2*(ms%100)+1])
	default:
		hi, lo := frac/1000, frac%1000
		dst = append(dst, '.', byte('0'+hi/100), digits2[2*(hi%100)], digits2[2*(hi%100)+1],
			byte('0'+lo/100), digits2[2*(lo%100)], digits2[2*(lo%100)+1])
	}
	return append(dst, 'Z', '"')
}

// digits2 is cqltype's two-digit table: one table for every date/time renderer.
const digits2 = cqltype.Digits2

// civil is cqltype.CivilFromDays in the widths the renderer wants.
func civil(z int64) (y, m, d int64) {
	y, mm, dd := cqltype.CivilFromDays(z)
	return y, int64(mm), int64(dd)
}

// appendInt appends v in decimal, two digits at a time, straight into dst.
func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendInt(dst, v, 10)
	}
	u := uint64(v)
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	n := decimalLen(u)
	if cap(dst)-len(dst) < n {
		dst = slices.Grow(dst, n)
	}
	b := dst[len(dst) : len(dst)+n]
	i := n
	for u >= 100 {
		q := u / 100
		d := 2 * (u - q*100)
		i -= 2
		b[i], b[i+1] = digits2[d], digits2[d+1]
		u = q
	}
	if u >= 10 {
		b[0], b[1] = digits2[2*u], digits2[2*u+1]
	} else {
		b[0] = byte('0' + u)
	}
	return dst[:len(dst)+n]
}

var pow10u = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decimalLen returns the number of decimal digits of u > 0.
func decimalLen(u uint64) int {
	n := (bits.Len64(u) * 1233) >> 12 // about log10(2^bits)
	if n < len(pow10u) && u >= pow10u[n] {
		n++
	}
	return n
}

// parseDate is appendDate's inverse, for the reader: the text inside the
// quotes, either a number (-t) or an instant as instant and appendDate
// print it ("2023-11-14T22:13:20.123456Z", "+10000-01-01T00:00:00Z"), in
// microseconds (micros) or seconds. ok is false for anything else, and
// for an instant that does not fit (or, in seconds, has a fraction).
func parseDate(s []byte, micros bool) (v int64, ok bool) {
	if n, err := strconv.ParseInt(string(s), 10, 64); err == nil {
		return n, true
	}
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	const rest = len("-01-02T15:04:05")
	if i == 0 || i > 12 || len(s) < i+rest+1 || s[len(s)-1] != 'Z' {
		return 0, false
	}
	y := digitsValue(s[:i])
	if neg {
		y = -y
	}
	t := s[i:]
	if t[0] != '-' || t[3] != '-' || t[6] != 'T' || t[9] != ':' || t[12] != ':' {
		return 0, false
	}
	mo, d, h, mi, sec := digitsValue(t[1:3]), digitsValue(t[4:6]), digitsValue(t[7:9]), digitsValue(t[10:12]), digitsValue(t[13:15])
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	days := cqltype.DaysFromCivil(y, int(mo), int(d))
	if y2, m2, d2 := cqltype.CivilFromDays(days); y2 != y || m2 != int(mo) || d2 != int(d) {
		return 0, false
	}
	frac := t[15 : len(t)-1]
	var sub int64 // the fraction in nanoseconds
	switch {
	case len(frac) == 0:
	case frac[0] == '.' && (len(frac) == 4 || len(frac) == 7 || len(frac) == 10):
		sub = digitsValue(frac[1:])
		if sub < 0 {
			return 0, false
		}
		sub *= pow10[10-len(frac)]
	default:
		return 0, false
	}
	secs, ok := mulAdd(days, 86400, h*3600+mi*60+sec)
	if !ok {
		return 0, false
	}
	if !micros {
		return secs, sub == 0
	}
	if sub%1000 != 0 {
		return 0, false
	}
	return mulAdd(secs, 1_000_000, sub/1000)
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

// digitsValue reads decimal digits (at most 18); -1 for anything else.
func digitsValue(b []byte) int64 {
	if len(b) == 0 || len(b) > 18 {
		return -1
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// mulAdd is a*b+c, ok false when it overflows.
func mulAdd(a, b, c int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(max(a, -a)), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	p := int64(lo)
	if a < 0 {
		p = -p
	}
	s := p + c
	if (c > 0 && s < p) || (c < 0 && s > p) {
		return 0, false
	}
	return s, true
}
