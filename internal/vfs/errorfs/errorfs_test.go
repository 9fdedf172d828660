package errorfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// A crash stops the counted operation and everything after it, closes
// what the dead process held (its lock is free again) and leaves on disk
// exactly what happened before it.
func TestCrashAt(t *testing.T) {
	dir := t.TempDir()
	var seen []string
	e := New(vfs.Default).CrashAt(3, nil).Trace(func(op Op) { seen = append(seen, op.Kind.String()) })
	lock, err := e.Lock(dir) // change 0
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	f, err := e.Create(filepath.Join(dir, "a"), 0o644) // change 1
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("kept")); err != nil { // a write: not counted
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil { // change 2
		t.Fatal(err)
	}
	if err := e.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")); !errors.Is(err, ErrCrashed) { // change 3: the crash
		t.Fatalf("rename at the crash point: %v", err)
	}
	if !e.Crashed() {
		t.Fatal("not crashed")
	}
	if _, err := f.Write([]byte("lost")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write after the crash: %v", err)
	}
	if _, err := e.Stat(dir); !errors.Is(err, ErrCrashed) {
		t.Fatalf("a dead process reads nothing either: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a")); err != nil || string(b) != "kept" {
		t.Fatalf("after the crash a holds %q, %v; want what was written before it", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Fatalf("the rename the crash stopped happened: %v", err)
	}
	other, err := vfs.Default.Lock(dir)
	if err != nil {
		t.Fatalf("the dead process's lock was not released: %v", err)
	}
	other.Close()
	if want := []string{"lock", "create", "write", "fsync"}; len(seen) != len(want) || seen[0] != want[0] || seen[3] != want[3] {
		t.Fatalf("traced %v, want %v", seen, want)
	}
}

// A crash in the middle of a write tears it: the first bytes reach the
// file, the rest never do.
func TestCrashAfterBytes(t *testing.T) {
	dir := t.TempDir()
	e := New(vfs.Default).CrashAfterBytes(7)
	f, err := e.Create(filepath.Join(dir, "a"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("write before the point: %d %v", n, err)
	}
	if n, err := f.Write([]byte("defghij")); n != 4 || !errors.Is(err, ErrCrashed) {
		t.Fatalf("the write across the point: %d %v", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "abcdefg" {
		t.Fatalf("file holds %q, want the 7 bytes before the crash", b)
	}
}

// A full disk cuts the write that crosses the point, fails it and every
// later write with ENOSPC, and the process goes on: it can still clean up.
func TestNoSpace(t *testing.T) {
	dir := t.TempDir()
	e := New(vfs.Default).NoSpaceAfterBytes(5)
	f, err := e.Create(filepath.Join(dir, "a"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write([]byte("0123456789")); n != 5 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write across the point: %d %v", n, err)
	}
	if n, err := f.Write([]byte("x")); n != 0 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full disk: %d %v", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "01234" {
		t.Fatalf("file holds %q", b)
	}
	if err := e.Remove(filepath.Join(dir, "a")); err != nil || e.Crashed() {
		t.Fatalf("cleaning up on a full disk: %v (crashed %v)", err, e.Crashed())
	}
}

// FailSync fails the fsync of the files and directories it names with EIO
// and no other.
func TestFailSync(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	e := New(vfs.Default).FailSync(func(p string) bool { return p == bad || p == dir })
	for _, name := range []string{"good", "bad"} {
		f, err := e.Create(filepath.Join(dir, name), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Sync()
		if (name == "bad") != errors.Is(err, syscall.EIO) {
			t.Errorf("fsync of %s: %v", name, err)
		}
		f.Close()
	}
	if err := e.SyncDir(dir); !errors.Is(err, syscall.EIO) {
		t.Errorf("fsync of the directory: %v", err)
	}
	if err := e.SyncDir(t.TempDir()); err != nil {
		t.Errorf("fsync of another directory: %v", err)
	}
}
