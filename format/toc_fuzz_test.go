package format

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseTOC: any bytes give either component names (non-empty UTF-8
// lines) or an error whose text is valid UTF-8 (the bad line quoted,
// never echoed raw).
func FuzzParseTOC(f *testing.F) {
	f.Add([]byte("Data.db\nIndex.db\nTOC.txt\n"))
	f.Add([]byte("Data.db\r\nIndex.db\r\n"))
	f.Add([]byte("Data.db\r\xff\xfe\x1b[2J\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		names, err := parseTOC("oa-1-big-TOC.txt", b)
		if err != nil {
			if !utf8.ValidString(err.Error()) || !strings.Contains(err.Error(), "oa-1-big-TOC.txt") {
				t.Fatalf("error %q", err.Error())
			}
			return
		}
		for _, n := range names {
			if n == "" || !utf8.ValidString(n) || strings.ContainsAny(n, "\r\n") {
				t.Fatalf("name %q", n)
			}
		}
	})
}
