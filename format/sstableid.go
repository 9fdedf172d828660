package format

import (
	"regexp"
	"strconv"
	"strings"
)

// Sstable ids come in two kinds (io/sstable/SSTableIdFactory): integer
// generations (SequenceBasedSSTableId), and since Cassandra 4.1, with
// uuid_sstable_identifiers_enabled, time-UUIDs written in base 36
// (UUIDBasedSSTableId): "3gsm_0lob_1zdg02we44my8dy25w".

var uuidGeneration = regexp.MustCompile(`(?i)^([0-9a-z]{4})_([0-9a-z]{4})_([0-9a-z]{5})([0-9a-z]{13})$`)

// SequenceGeneration parses an integer generation as
// SequenceBasedSSTableId.Builder accepts it: 1 to 10 digits, a
// non-negative int.
func SequenceGeneration(s string) (int, bool) {
	if s == "" || len(s) > 10 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// IsUUIDGeneration reports whether s is a UUID-based sstable id's text.
func IsUUIDGeneration(s string) bool { return uuidGeneration.MatchString(s) }

// UUIDGeneration is the text of the UUID-based sstable id of a time UUID
// given as its timestamp (100 ns ticks since 1582-10-15) and its clock
// sequence and node half (UUIDBasedSSTableId.asString): days, seconds of
// the day and the tick within the second, then the low half, in base 36,
// zero-padded to 4, 4, 5 and 13 digits.
func UUIDGeneration(tick int64, lsb uint64) string {
	nano := tick % 10_000_000
	t := tick / 10_000_000
	secs := t % 86_400
	days := t / 86_400
	pad := func(s string, n int) string {
		if len(s) < n {
			s = strings.Repeat("0", n-len(s)) + s
		}
		return s
	}
	return pad(strconv.FormatInt(days, 36), 4) + "_" + pad(strconv.FormatInt(secs, 36), 4) + "_" +
		pad(strconv.FormatInt(nano, 36), 5) + pad(strconv.FormatUint(lsb, 36), 13)
}

// ParseUUIDGeneration is UUIDBasedSSTableId.Builder.fromString: the
// timestamp and low half of a UUID-based id's text.
func ParseUUIDGeneration(s string) (tick int64, lsb uint64, ok bool) {
	m := uuidGeneration.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	days, err1 := strconv.ParseInt(m[1], 36, 64)
	secs, err2 := strconv.ParseInt(m[2], 36, 64)
	nano, err3 := strconv.ParseInt(m[3], 36, 64)
	lsb, err4 := strconv.ParseUint(m[4], 36, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return 0, 0, false
	}
	return (days*86_400+secs)*10_000_000 + nano, lsb, true
}

// CompareGenerations orders sstable ids as their writers made them:
// integer generations numerically and before UUID ids, which sort by
// their text (time first).
func CompareGenerations(a, b string) int {
	na, oka := SequenceGeneration(a)
	nb, okb := SequenceGeneration(b)
	switch {
	case oka && okb:
		return na - nb
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}
