package inspect

// Figures printed the way Cassandra's tools print them, for output an
// operator compares with sstablemetadata's or sstablepartitions'.

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// fixedHalfUp is n / 2^shift with the given decimals, rounded half up as
// Java's String.format("%.Nf") rounds (Go's %.Nf rounds ties to even).
// Quotients of powers of two are exact in binary, so ties are real.
func fixedHalfUp(n int64, shift uint, decimals int) string {
	neg := n < 0
	if neg {
		n = -n
	}
	scale := big.NewInt(1)
	for range decimals {
		scale.Mul(scale, big.NewInt(10))
	}
	x := new(big.Int).Mul(big.NewInt(n), scale)
	q := new(big.Int).Rsh(x, shift)
	rem := new(big.Int).Sub(x, new(big.Int).Lsh(q, shift))
	if rem.Lsh(rem, 1).Cmp(new(big.Int).Lsh(big.NewInt(1), shift)) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	digits := q.String()
	if len(digits) <= decimals {
		digits = strings.Repeat("0", decimals-len(digits)+1) + digits
	}
	out := digits
	if decimals > 0 {
		out = digits[:len(digits)-decimals] + "." + digits[len(digits)-decimals:]
	}
	if neg {
		out = "-" + out
	}
	return out
}

// PrettyMemory is FBUtilities.prettyPrintMemory(bytes, " "), which
// sstablepartitions prints sizes with: below 1 KiB "123 B", above with
// three decimals and a binary unit ("65.630 KiB").
func PrettyMemory(b int64) string {
	abs := b
	if abs < 0 {
		abs = -abs
	}
	idx := (63 - bits.LeadingZeros64(uint64(abs))) / 10
	if idx <= 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fixedHalfUp(b, uint(10*idx), 3) + " " + string("KMGTPEZYRQ"[idx-1]) + "iB"
}

// ToByteString is SSTableMetadataViewer.ToByteString: "" for 0 (Java's
// null), "123 B", else one decimal and a 1024-based unit written kB, MB,
// GB... ("71.7 kB").
func ToByteString(b int64) string {
	switch {
	case b == 0:
		return ""
	case b < 1024:
		return fmt.Sprintf("%d B", b)
	}
	exp := int(math.Log(float64(b)) / math.Log(1024))
	if exp < 1 || exp > 5 {
		return fmt.Sprintf("%d B", b)
	}
	return fixedHalfUp(b, uint(10*exp), 1) + " " + string("kMGTP"[exp-1]) + "B"
}

// DurationString is SSTableMetadataViewer.DurationString of a span in
// microseconds: "Days: 0 Hours: 0 Minutes: 2 Seconds: 41".
func DurationString(micros int64) string {
	sec := micros / 1_000_000
	day := sec / 86400
	hours := sec/3600 - day*24
	minute := sec/60 - sec/3600*60
	second := sec - sec/60*60
	return fmt.Sprintf("Days: %d Hours: %d Minutes: %d Seconds: %d", day, hours, minute, second)
}

// DurationWords is SSTableMetadataViewer.toDurationString of a TTL in
// seconds: "" for 0 (Java's null), "never" for Integer.MAX_VALUE, else
// commons-lang's formatDurationWords with leading and trailing zero
// elements left out ("1 day", "2 hours 30 minutes").
func DurationWords(seconds int64) string {
	switch seconds {
	case 0:
		return ""
	case math.MaxInt32:
		return "never"
	}
	ms := seconds * 1000
	d := ms / 86_400_000
	h := ms % 86_400_000 / 3_600_000
	m := ms % 3_600_000 / 60_000
	sec := ms % 60_000 / 1000
	s := fmt.Sprintf("%d days %d hours %d minutes %d seconds", d, h, m, sec)
	// Leading zero elements, as far as each removal succeeds (commons-lang
	// never removes a leading " 0 seconds").
	s = " " + s
	if t := strings.Replace(s, " 0 days", "", 1); len(t) != len(s) {
		s = t
		if t := strings.Replace(s, " 0 hours", "", 1); len(t) != len(s) {
			s = strings.Replace(t, " 0 minutes", "", 1)
		}
	}
	s = s[1:]
	// Trailing zero elements.
	if t := strings.Replace(s, " 0 seconds", "", 1); len(t) != len(s) {
		s = t
		if t := strings.Replace(s, " 0 minutes", "", 1); len(t) != len(s) {
			s = t
			if t := strings.Replace(s, " 0 hours", "", 1); len(t) != len(s) {
				s = strings.Replace(t, " 0 days", "", 1)
			}
		}
	}
	s = " " + s
	for _, u := range []string{"second", "minute", "hour", "day"} {
		s = strings.Replace(s, " 1 "+u+"s", " 1 "+u, 1)
	}
	return strings.TrimSpace(s)
}

// TimeUnits are java.util.concurrent.TimeUnit's names, for -t.
var TimeUnits = map[string]time.Duration{
	"NANOSECONDS": time.Nanosecond, "MICROSECONDS": time.Microsecond, "MILLISECONDS": time.Millisecond,
	"SECONDS": time.Second, "MINUTES": time.Minute, "HOURS": time.Hour, "DAYS": 24 * time.Hour,
}

// DateIn is the instant v units after the epoch in UTC, RFC 3339 ("" for 0
// and the extremes, which mean "none").
func DateIn(v int64, unit time.Duration) string {
	if v == 0 || v == math.MinInt64 || v == math.MaxInt64 {
		return ""
	}
	var t time.Time
	switch {
	case unit < time.Second:
		t = cqltype.UnixTime(v, unit)
	default:
		per := int64(unit / time.Second)
		if hi, lo := bits.Mul64(uint64(abs64(v)), uint64(per)); hi != 0 || lo > math.MaxInt64 {
			return ""
		}
		t = time.Unix(v*per, 0)
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// JavaDouble is Double.toString: decimal notation with at least one
// fractional digit between 10^-3 and 10^7 ("0.0", "1.0", "0.01"),
// computerized scientific notation outside ("1.0E-4", "1.5E7").
func JavaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(v); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
