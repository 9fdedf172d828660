// Package words is the one home of the small rules for words and numbers
// that output in more than one package needs: a count with its noun in
// the right number, thousands separators, and Cassandra's byte-size
// formats, rounded as Java rounds them (memory.go). Every package prints
// through these; none keeps a pluralizer or a size table of its own.
package words

import (
	"fmt"
	"strconv"
	"strings"
)

// Plural writes n with its noun, "1 partition", "2 partitions",
// "3 directories": the counts every command prints read as words.
func Plural[T ~int | ~int64](n T, noun string) string {
	return fmt.Sprintf("%d %s", n, Noun(n, noun))
}

// PluralGrouped is Plural with thousands separators, "12,345 partitions",
// for the terminal UI's counts.
func PluralGrouped[T ~int | ~int64](n T, noun string) string {
	return Thousands(int64(n)) + " " + Noun(n, noun)
}

// Noun is noun in the number n asks for: singular for 1, else the regular
// English plural ("partitions", "directories", "matches").
func Noun[T ~int | ~int64](n T, noun string) string {
	if n == 1 {
		return noun
	}
	if strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsAny(noun[len(noun)-2:len(noun)-1], "aeiou") {
		return noun[:len(noun)-1] + "ies"
	}
	for _, sibilant := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(noun, sibilant) && len(noun) > len(sibilant) {
			return noun + "es"
		}
	}
	return noun + "s"
}

// Thousands writes n with a comma between groups of three digits,
// "-1,234,567".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
