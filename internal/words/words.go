// Package words holds the small English rules the commands' output needs
// in more than one package: a count with its noun in the right number.
package words

import (
	"fmt"
	"strings"
)

// Plural writes n with its noun, "1 partition", "2 partitions",
// "3 directories": the counts every command prints read as words.
func Plural[T ~int | ~int64](n T, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if strings.HasSuffix(noun, "y") && len(noun) > 1 && !strings.ContainsAny(noun[len(noun)-2:len(noun)-1], "aeiou") {
		return fmt.Sprintf("%d %sies", n, noun[:len(noun)-1])
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
