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

// Lines that are no component file name (terminal escapes, paths out of
// the directory) never become components: they are returned apart, with
// their line and offset, and print quoted.
func TestTOCImplausibleEntries(t *testing.T) {
	d, want := tocCopy(t, func(real []byte) []byte {
		return append(real, "\x1b[31mEvil\x07\n../../../../etc/hostname\n..\nSAI+aa+tbl_idx+Meta.db\n"...)
	})
	got, bad, err := d.ReadTOCEntries()
	if err != nil {
		t.Fatal(err)
	}
	if want = append(want, "SAI+aa+tbl_idx+Meta.db"); !slices.Equal(got, want) {
		t.Errorf("components %q, want %q", got, want)
	}
	if len(bad) != 3 {
		t.Fatalf("left out %+v, want 3 lines", bad)
	}
	for i, w := range []struct {
		line   int
		quoted string
	}{{9, `"\x1b[31mEvil\a"`}, {10, `"../../../../etc/hostname"`}, {11, `".."`}} {
		b, _ := os.ReadFile(d.Path(format.ComponentTOC))
		if e := bad[i]; e.Line != w.line || e.Quoted() != w.quoted || !strings.HasPrefix(string(b[e.Offset:]), e.Text+"\n") {
			t.Errorf("entry %d: %+v quoted %s, want line %d %s", i, e, e.Quoted(), w.line, w.quoted)
		}
	}
	if names, _ := d.ReadTOC(); !slices.Equal(names, want) {
		t.Errorf("ReadTOC %q", names)
	}
}
