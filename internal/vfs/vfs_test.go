package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The operating system's FS: Create never overwrites, OpenAppend appends,
// Lock is exclusive until closed.
func TestDefault(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	if err := WriteFile(Default, p, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Create(p, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over an existing file: %v", err)
	}
	f, err := Default.OpenAppend(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("two\n"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(p); string(b) != "one\ntwo\n" {
		t.Fatalf("after append: %q", b)
	}
	if err := Default.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		return
	}
	l, err := Default.Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Default.Lock(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	l.Close()
	l, err = Default.Lock(dir)
	if err != nil {
		t.Fatalf("Lock after Close: %v", err)
	}
	l.Close()
}
