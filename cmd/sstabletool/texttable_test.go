package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"
)

// FuzzTextTableMatchesTabwriter holds textTable to text/tabwriter with the
// settings it stands for: the same bytes for any cells (split from the
// input at 0x00, rows of cols cells, a flush after every flushEvery rows),
// tabs, newlines, escapes and invalid UTF-8 included.
func FuzzTextTableMatchesTabwriter(f *testing.F) {
	f.Add([]byte("key\x00token\x00offset\x00a\x00-9223\x000\x00bb\x00-1\x00123456"), uint8(3), uint8(0))
	f.Add([]byte("k\xe9y\x00tök\x00\xff\x00a\tb\x00c\nd\x00\x00\x00\x00"), uint8(2), uint8(1))
	f.Add([]byte("x\x00yy\x00zzz\x00\x00\x00"), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, cols, flushEvery uint8) {
		n := int(cols%8) + 1
		cells := strings.Split(string(in), "\x00")
		cells = cells[:len(cells)/n*n]
		var want, got bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', tabwriter.AlignRight)
		tt := newTextTable(&got, n)
		for r := 0; r*n < len(cells); r++ {
			row := cells[r*n : r*n+n]
			for _, c := range row {
				tw.Write([]byte(c + "\t"))
				tt.cell(c)
			}
			tw.Write([]byte("\n"))
			tt.endRow()
			if flushEvery > 0 && (r+1)%int(flushEvery) == 0 {
				tw.Flush()
				tt.Flush()
			}
		}
		tw.Flush()
		tt.Flush()
		if !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("cells %q in rows of %d:\ntabwriter %q\ntextTable %q", cells, n, want.Bytes(), got.Bytes())
		}
	})
}

// TestTextTableInts: integer cells are decimal, as %d prints them.
func TestTextTableInts(t *testing.T) {
	var got, want bytes.Buffer
	tt := newTextTable(&got, 3)
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', tabwriter.AlignRight)
	for _, row := range [][3]int64{{0, -1, 9223372036854775807}, {-9223372036854775808, 42, 7}} {
		for _, v := range row {
			tt.int(v)
		}
		tt.endRow()
		fmt.Fprintf(tw, "%d\t%d\t%d\t\n", row[0], row[1], row[2])
	}
	tt.Flush()
	tw.Flush()
	if got.String() != want.String() {
		t.Errorf("got %q, want %q", got.String(), want.String())
	}
}
