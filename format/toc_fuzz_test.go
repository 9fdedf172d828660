package format

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseTOC: any bytes give either component names (non-empty UTF-8
// lines that are plausible file names, so never a path) and the lines
// left out, each quoted as printable text at its offset, or an error
// whose text is valid UTF-8 (the bad line quoted, never echoed raw).
func FuzzParseTOC(f *testing.F) {
	f.Add([]byte("Data.db\nIndex.db\nTOC.txt\n"))
	f.Add([]byte("Data.db\r\nIndex.db\r\n"))
	f.Add([]byte("Data.db\r\xff\xfe\x1b[2J\n"))
	f.Add([]byte("Data.db\n\x1b[31mEvil\x07\n../../../../etc/hostname\n..\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		names, bad, err := parseTOC("oa-1-big-TOC.txt", b)
		if err != nil {
			if !utf8.ValidString(err.Error()) || !strings.Contains(err.Error(), "oa-1-big-TOC.txt") {
				t.Fatalf("error %q", err.Error())
			}
			return
		}
		for _, n := range names {
			if n == "" || !utf8.ValidString(n) || strings.ContainsAny(n, "\r\n/\\") || n == ".." || implausibleComponent(n) != "" {
				t.Fatalf("name %q", n)
			}
		}
		for _, e := range bad {
			q := e.Quoted()
			if e.Why == "" || e.Offset < 0 || e.Offset >= int64(len(b)) || !strings.HasPrefix(q, `"`) {
				t.Fatalf("bad entry %+v quoted %s", e, q)
			}
			for _, r := range q {
				if r < 0x20 || r == 0x7f {
					t.Fatalf("quoted entry %q holds a control character", q)
				}
			}
		}
	})
}
