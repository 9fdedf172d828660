package inspect

// Figures printed the way Cassandra's tools print them, for output an
// operator compares with sstablemetadata's or sstablepartitions'. The
// byte sizes (prettyPrintMemory, toByteString) are internal/words'.

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

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
