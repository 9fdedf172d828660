package reader

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestParseAccess(t *testing.T) {
	for s, want := range map[string]Access{"mmap": Mmap, "MMAP": Mmap, "buffered": Buffered, " Buffered ": Buffered} {
		got, err := ParseAccess(s)
		if err != nil || got != want {
			t.Errorf("ParseAccess(%q) = %v, %v; want %v", s, got, err, want)
		}
		if back, _ := ParseAccess(got.String()); back != got {
			t.Errorf("String/ParseAccess do not round-trip for %v", got)
		}
	}
	for _, a := range AccessModes() {
		if back, err := ParseAccess(a.String()); err != nil || back != a {
			t.Errorf("ParseAccess(%q) = %v, %v", a, back, err)
		}
	}
	if _, err := ParseAccess("standard"); err == nil {
		t.Error("ParseAccess accepted an unknown mode")
	}
}

func TestOpenMatchesFileBytes(t *testing.T) {
	for _, f := range fixtureTables(t) {
		want, err := os.ReadFile(f.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []Access{Mmap, Buffered} {
			file, err := Open(f.data, a)
			if err != nil {
				t.Fatalf("%s %v: %v", f.name, a, err)
			}
			if file.Size() != int64(len(want)) || file.Path() != f.data {
				t.Errorf("%s %v: Size %d Path %q", f.name, a, file.Size(), file.Path())
			}
			if got := mustReadAll(t, file, file.Size()); !bytes.Equal(got, want) {
				t.Errorf("%s %v: ReadAt of the whole file differs", f.name, a)
			}
			// Small reads at every offset go through the buffer (Buffered).
			for off := 0; off < len(want); off += 97 {
				p := make([]byte, 13)
				n, err := file.ReadAt(p, int64(off))
				wantN := min(13, len(want)-off)
				if n != wantN || !bytes.Equal(p[:n], want[off:off+n]) {
					t.Fatalf("%s %v: ReadAt(13, %d) = %d bytes", f.name, a, off, n)
				}
				if (wantN < 13) != (err == io.EOF) {
					t.Fatalf("%s %v: ReadAt(13, %d) err = %v", f.name, a, off, err)
				}
			}
			if _, err := file.ReadAt(make([]byte, 1), file.Size()); err != io.EOF {
				t.Errorf("%s %v: read at end: %v, want io.EOF", f.name, a, err)
			}
			if _, err := file.ReadAt(make([]byte, 1), -1); err == nil {
				t.Errorf("%s %v: negative offset accepted", f.name, a)
			}
			m, isMapped := file.(Mapped)
			if isMapped != (a == Mmap) {
				t.Errorf("%s %v: Mapped = %v", f.name, a, isMapped)
			}
			if isMapped && !bytes.Equal(m.Bytes(), want) {
				t.Errorf("%s: Bytes() differs from the file", f.name)
			}
			if err := file.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := file.ReadAt(make([]byte, 1), 0); err == nil {
				t.Errorf("%s %v: read after Close succeeded", f.name, a)
			}
		}
	}
}

func TestOpenEmptyFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty-Data.db")
	if err := os.WriteFile(p, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Access{Mmap, Buffered} {
		f, err := Open(p, a)
		if err != nil {
			t.Fatalf("%v: %v", a, err)
		}
		if f.Size() != 0 {
			t.Errorf("%v: size %d", a, f.Size())
		}
		if n, err := f.ReadAt(make([]byte, 4), 0); n != 0 || err != io.EOF {
			t.Errorf("%v: ReadAt = %d, %v", a, n, err)
		}
		d, err := newData(f, DataOptions{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := d.Cursor(0)
		if b, err := c.Next(0); err != nil || len(b) != 0 {
			t.Errorf("%v: Next(0) on empty data = %v, %v", a, b, err)
		}
		if _, err := c.Next(1); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%v: Next(1) on empty data: %v", a, err)
		}
		f.Close()
	}
}

func TestOpenIsReadOnly(t *testing.T) {
	// A read-only file (mode 0444, as the fixtures are) must open in both modes.
	p := filepath.Join(t.TempDir(), "ro-Data.db")
	if err := os.WriteFile(p, []byte("abc"), 0o444); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Access{Mmap, Buffered} {
		f, err := Open(p, a)
		if err != nil {
			t.Fatalf("%v: %v", a, err)
		}
		f.Close()
	}
	if _, err := Open(filepath.Dir(p), Mmap); err == nil {
		t.Error("opened a directory")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), Buffered); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestBufferedConcurrentReadAt(t *testing.T) {
	for _, f := range fixtureTables(t)[:3] {
		want, _ := os.ReadFile(f.data)
		file, err := Open(f.data, Buffered)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				p := make([]byte, 7)
				for off := g; off+7 <= len(want); off += 11 {
					if _, err := file.ReadAt(p, int64(off)); err != nil || !bytes.Equal(p, want[off:off+7]) {
						t.Errorf("concurrent ReadAt at %d: %v", off, err)
						return
					}
				}
			}(g)
		}
		wg.Wait()
		file.Close()
	}
}

// Reads after Close fail with ErrClosed in both modes, whatever their size
// (large buffered reads bypass the buffer and its lock).
func TestReadAfterCloseIsErrClosed(t *testing.T) {
	f := fixtureTables(t)[0]
	for _, a := range []Access{Mmap, Buffered} {
		file, err := Open(f.data, a)
		if err != nil {
			t.Fatal(err)
		}
		if err := file.Close(); err != nil {
			t.Fatalf("%v: Close: %v", a, err)
		}
		if err := file.Close(); err != nil {
			t.Errorf("%v: second Close: %v", a, err)
		}
		for _, n := range []int{16, directReadSize, 2 * directReadSize} {
			if _, err := file.ReadAt(make([]byte, n), 0); !errors.Is(err, ErrClosed) {
				t.Errorf("%v: ReadAt of %d bytes after Close: %v, want ErrClosed", a, n, err)
			}
		}
	}
}
