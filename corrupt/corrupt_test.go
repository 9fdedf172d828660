package corrupt_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
)

func TestCorruptErrorMessage(t *testing.T) {
	cases := []struct {
		err  *corrupt.Error
		want string
	}{
		{corrupt.New("/d/nb-1-big-Data.db", "Data.db", 42, "chunk CRC 0x1", io.ErrUnexpectedEOF),
			"/d/nb-1-big-Data.db: Data.db at byte 42: expected chunk CRC 0x1: unexpected EOF"},
		{corrupt.New("", "CompressionInfo.db", 0, "option count", nil),
			"CompressionInfo.db at byte 0: expected option count"},
		{corrupt.New("f", "", -1, "", io.EOF), "f: EOF"},
		{corrupt.New("", "", 7, "", nil), "at byte 7"},
		{corrupt.New("", "", -1, "", nil), "corrupt sstable"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

func TestCorruptErrorUnwrap(t *testing.T) {
	var err error = fmt.Errorf("outer: %w", corrupt.New("f", "Data.db", 1, "x", io.ErrUnexpectedEOF))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal("errors.Is through CorruptError failed")
	}
	var ce *corrupt.Error
	if !errors.As(err, &ce) || ce.Offset != 1 || ce.Component != "Data.db" {
		t.Fatalf("errors.As gave %+v", ce)
	}
}

// WithFile names the file in the innermost-first *Error that lacks one,
// through any wrapping, and leaves a named one alone.
func TestWithFile(t *testing.T) {
	inner := corrupt.New("", "Index.db", 7, "a key", nil)
	err := corrupt.WithFile(fmt.Errorf("looking up: %w", inner), "/d/nb-1-big-Index.db")
	if e, ok := corrupt.As(err); !ok || e.File != "/d/nb-1-big-Index.db" {
		t.Fatalf("WithFile: %v", err)
	}
	named := corrupt.New("/a", "Data.db", 1, "x", nil)
	if corrupt.WithFile(named, "/b"); named.File != "/a" {
		t.Errorf("WithFile renamed %q", named.File)
	}
	if err := corrupt.WithFile(errors.New("plain"), "/b"); err.Error() != "plain" {
		t.Errorf("WithFile changed a plain error: %v", err)
	}
}

// Place fills only what is empty, moves a known offset, copies a top-level
// error (a kept error is never moved twice) and changes a wrapped one in
// place; an unknown offset stays unknown.
func TestPlace(t *testing.T) {
	kept := corrupt.New("", "", 5, "a length", nil)
	first := corrupt.Place(kept, "/d/Index.db", "Index.db", 100)
	second := corrupt.Place(kept, "/d/Index.db", "Index.db", 100)
	if first.Error() != "/d/Index.db: Index.db at byte 105: expected a length" || second.Error() != first.Error() {
		t.Fatalf("Place: %q then %q", first, second)
	}
	if kept.Offset != 5 || kept.File != "" {
		t.Errorf("Place changed the error it was given: %+v", kept)
	}
	inner := corrupt.New("", "Rows.db", 3, "a node", nil)
	wrapped := fmt.Errorf("walking: %w", inner)
	if got := corrupt.Place(wrapped, "/d/Rows.db", "Partitions.db", 10); got != wrapped {
		t.Errorf("Place replaced a wrapped chain: %v", got)
	}
	if inner.Offset != 13 || inner.File != "/d/Rows.db" || inner.Component != "Rows.db" {
		t.Errorf("Place on a wrapped error: %+v", inner)
	}
	unknown := corrupt.Place(corrupt.New("", "Data.db", -1, "x", nil), "f", "", 50)
	if e, _ := corrupt.As(unknown); e.Offset != -1 {
		t.Errorf("an unknown offset was moved to %d", e.Offset)
	}
	if corrupt.Place(nil, "f", "c", 1) != nil {
		t.Error("Place(nil) is not nil")
	}
}
