package reader

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestCorruptErrorMessage(t *testing.T) {
	cases := []struct {
		err  *CorruptError
		want string
	}{
		{Corrupt("/d/nb-1-big-Data.db", "Data.db", 42, "chunk CRC 0x1", io.ErrUnexpectedEOF),
			"/d/nb-1-big-Data.db: Data.db at byte 42: expected chunk CRC 0x1: unexpected EOF"},
		{Corrupt("", "CompressionInfo.db", 0, "option count", nil),
			"CompressionInfo.db at byte 0: expected option count"},
		{Corrupt("f", "", -1, "", io.EOF), "f: EOF"},
		{Corrupt("", "", 7, "", nil), "at byte 7"},
		{Corrupt("", "", -1, "", nil), "corrupt sstable"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

func TestCorruptErrorUnwrap(t *testing.T) {
	var err error = fmt.Errorf("outer: %w", Corrupt("f", "Data.db", 1, "x", io.ErrUnexpectedEOF))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal("errors.Is through CorruptError failed")
	}
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != 1 || ce.Component != "Data.db" {
		t.Fatalf("errors.As gave %+v", ce)
	}
}
