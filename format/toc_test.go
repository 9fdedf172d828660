package format_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

func tocCopy(t *testing.T, content func(real []byte) []byte) (format.Descriptor, []string) {
	t.Helper()
	src := filepath.Join(fixtures.Table(t, "oa", "legacy_oa_simple"), "oa-1-big-TOC.txt")
	real, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := format.ParseDescriptor(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := d.ReadTOC()
	if err != nil || len(want) < 8 {
		t.Fatalf("real TOC: %v %v", want, err)
	}
	d.Dir = t.TempDir()
	if err := os.WriteFile(d.Path(format.ComponentTOC), content(real), 0o644); err != nil {
		t.Fatal(err)
	}
	return d, want
}

// Binary garbage in TOC.txt is an error that names the file, the line and
// its byte offset, with the bytes quoted, never echoed raw.
func TestTOCGarbageIsQuoted(t *testing.T) {
	d, _ := tocCopy(t, func(real []byte) []byte {
		return append(append(real, "\n"...), 0xff, 0x00, 0x1b, '[', '2', 'J', 0xfe, '\n')
	})
	_, err := d.ReadTOC()
	var ce *corrupt.Error
	if !errors.As(err, &ce) || ce.File != d.Path(format.ComponentTOC) {
		t.Fatalf("want a CorruptError naming TOC.txt, got %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `"\xff\x00\x1b[2J\xfe"`) || !strings.Contains(msg, "line 10") {
		t.Fatalf("error does not quote the line or name it: %s", msg)
	}
	for _, r := range msg {
		if r < 0x20 || r == 0xfffd {
			t.Fatalf("error echoes a raw control or invalid byte: %q", msg)
		}
	}
}

// Java's readAllLines ends lines at \r\n and \r too.
func TestTOCLineEnds(t *testing.T) {
	for name, sep := range map[string]string{"crlf": "\r\n", "cr": "\r"} {
		d, want := tocCopy(t, func(real []byte) []byte { return []byte(strings.ReplaceAll(string(real), "\n", sep)) })
		got, err := d.ReadTOC()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", name, got, err, want)
		}
	}
}
