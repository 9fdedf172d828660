// Package errorfs wraps a vfs.FS to inject the faults a writer must
// survive, for tests: a crash (the process killed just before an
// operation, or in the middle of a write), an fsync that fails, and a full
// disk (ENOSPC). It is pebble's vfs/errorfs in miniature. The operations
// are counted and injected in the order they reach the FS, under one lock,
// so a test that crashes at the n-th change of a single-threaded writer
// crashes at the same place every run.
package errorfs

import (
	"errors"
	"io"
	"io/fs"
	"sync"
	"syscall"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// ErrCrashed is every operation's error once an injected crash fired:
// from then on nothing reaches the disk, as if the process had been
// killed at that instant.
var ErrCrashed = errors.New("errorfs: injected crash")

// Kind is what an operation does.
type Kind int

const (
	Create Kind = iota
	OpenAppend
	Write
	Sync    // a file's fsync
	SyncDir // a directory's fsync
	Rename
	Remove
	RemoveAll
	MkdirAll
	MkdirTemp
	Chmod
	Chown
	Lock
	Read // ReadFile, ReadDir, Stat, Lstat and File.Stat: no change
	Link
)

var kindNames = [...]string{"create", "open-append", "write", "fsync", "fsync-dir", "rename", "remove", "remove-all",
	"mkdir", "mkdir-temp", "chmod", "chown", "lock", "read", "link"}

func (k Kind) String() string { return kindNames[k] }

// Op is one operation on the file system.
type Op struct {
	Kind Kind
	Path string
}

// Changes matches the operations that change the disk, writes apart (a
// crash inside a write is CrashAfterBytes'): what a test of "a kill
// between any two steps" counts.
func Changes(op Op) bool { return op.Kind != Write && op.Kind != Read }

// Renames matches renames alone.
func Renames(op Op) bool { return op.Kind == Rename }

// FS is a vfs.FS with faults injected; New gives one with none, and the
// setters arm them (before the FS is used).
type FS struct {
	inner vfs.FS

	mu         sync.Mutex
	crashAt    int64 // matching operations left before the crash; <0: none
	crashMatch func(Op) bool
	crashBytes int64 // bytes left before the crash; <0: none
	spaceBytes int64 // bytes left before the disk is full; <0: unlimited
	failSync   func(path string) bool
	trace      func(Op)
	crashed    bool
	files      map[*file]bool
	locks      map[*lock]bool
}

// New wraps inner (vfs.Default for the real disk).
func New(inner vfs.FS) *FS {
	return &FS{inner: inner, crashAt: -1, crashBytes: -1, spaceBytes: -1, files: map[*file]bool{}, locks: map[*lock]bool{}}
}

// CrashAt kills the process just before the n-th operation (counted from
// 0) that match accepts (Changes when nil): that operation and every later
// one fail with ErrCrashed, and the files and locks the FS handed out are
// closed as the kernel closes a dead process's.
func (e *FS) CrashAt(n int64, match func(Op) bool) *FS {
	if match == nil {
		match = Changes
	}
	e.crashAt, e.crashMatch = n, match
	return e
}

// CrashAfterBytes kills the process once n more bytes have been written
// over all files: the write that crosses the point is torn there (its
// first bytes reach the file, the rest never do) and fails with ErrCrashed.
func (e *FS) CrashAfterBytes(n int64) *FS { e.crashBytes = n; return e }

// NoSpaceAfterBytes fills the disk once n more bytes have been written:
// the write that crosses the point is cut there and, like every write
// after it, fails with ENOSPC. The process goes on.
func (e *FS) NoSpaceAfterBytes(n int64) *FS { e.spaceBytes = n; return e }

// FailSync makes the fsync of every file and directory whose path match
// accepts fail with EIO, syncing nothing. The process goes on.
func (e *FS) FailSync(match func(path string) bool) *FS { e.failSync = match; return e }

// Trace calls fn with every operation (reads included) just before it is
// made (not with the one a crash stops), with the FS locked: fn must not
// use this FS.
func (e *FS) Trace(fn func(Op)) *FS { e.trace = fn; return e }

// Crashed reports whether an injected crash fired.
func (e *FS) Crashed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.crashed
}

// do runs one operation under the lock, unless the process is dead or the
// crash is due.
func (e *FS) do(kind Kind, path string, fn func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.step(Op{kind, path}); err != nil {
		return err
	}
	return fn()
}

// step accounts one operation; e.mu is held.
func (e *FS) step(op Op) error {
	if e.crashed {
		return ErrCrashed
	}
	if e.crashAt >= 0 && e.crashMatch(op) {
		if e.crashAt == 0 {
			e.crash()
			return ErrCrashed
		}
		e.crashAt--
	}
	if e.trace != nil {
		e.trace(op)
	}
	return nil
}

// crash kills the process: every file and lock it holds is closed.
func (e *FS) crash() {
	e.crashed = true
	for f := range e.files {
		f.f.Close()
	}
	for l := range e.locks {
		l.c.Close()
	}
	clear(e.files)
	clear(e.locks)
}

func (e *FS) syncFault(op, path string) error {
	if e.failSync != nil && e.failSync(path) {
		return &fs.PathError{Op: op, Path: path, Err: syscall.EIO} // as os.File.Sync words it
	}
	return nil
}

func (e *FS) open(kind Kind, name string, perm fs.FileMode, open func(string, fs.FileMode) (vfs.File, error)) (vfs.File, error) {
	var wf *file
	err := e.do(kind, name, func() error {
		f, err := open(name, perm)
		if err != nil {
			return err
		}
		wf = &file{e: e, f: f}
		e.files[wf] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return wf, nil
}

func (e *FS) Create(name string, perm fs.FileMode) (vfs.File, error) {
	return e.open(Create, name, perm, e.inner.Create)
}

func (e *FS) OpenAppend(name string, perm fs.FileMode) (vfs.File, error) {
	return e.open(OpenAppend, name, perm, e.inner.OpenAppend)
}

func (e *FS) ReadFile(name string) (b []byte, err error) {
	err = e.do(Read, name, func() error { b, err = e.inner.ReadFile(name); return err })
	return b, err
}

func (e *FS) ReadDir(dir string) (ents []fs.DirEntry, err error) {
	err = e.do(Read, dir, func() error { ents, err = e.inner.ReadDir(dir); return err })
	return ents, err
}

func (e *FS) Stat(name string) (fi fs.FileInfo, err error) {
	err = e.do(Read, name, func() error { fi, err = e.inner.Stat(name); return err })
	return fi, err
}

func (e *FS) Lstat(name string) (fi fs.FileInfo, err error) {
	err = e.do(Read, name, func() error { fi, err = e.inner.Lstat(name); return err })
	return fi, err
}

func (e *FS) MkdirAll(dir string, perm fs.FileMode) error {
	return e.do(MkdirAll, dir, func() error { return e.inner.MkdirAll(dir, perm) })
}

func (e *FS) MkdirTemp(dir, pattern string) (name string, err error) {
	err = e.do(MkdirTemp, dir, func() error { name, err = e.inner.MkdirTemp(dir, pattern); return err })
	return name, err
}

func (e *FS) Rename(from, to string) error {
	return e.do(Rename, from, func() error { return e.inner.Rename(from, to) })
}

func (e *FS) Link(from, to string) error {
	return e.do(Link, to, func() error { return e.inner.Link(from, to) })
}

func (e *FS) Remove(name string) error {
	return e.do(Remove, name, func() error { return e.inner.Remove(name) })
}

func (e *FS) RemoveAll(name string) error {
	return e.do(RemoveAll, name, func() error { return e.inner.RemoveAll(name) })
}

func (e *FS) SyncDir(dir string) error {
	return e.do(SyncDir, dir, func() error {
		if err := e.syncFault("sync", dir); err != nil {
			return err
		}
		return e.inner.SyncDir(dir)
	})
}

func (e *FS) Lock(dir string) (io.Closer, error) {
	var l *lock
	err := e.do(Lock, dir, func() error {
		c, err := e.inner.Lock(dir)
		if err != nil {
			return err
		}
		l = &lock{e: e, c: c}
		e.locks[l] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// file is a vfs.File of an FS.
type file struct {
	e *FS
	f vfs.File
}

func (f *file) Name() string { return f.f.Name() }

func (f *file) Write(p []byte) (int, error) {
	e := f.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.step(Op{Write, f.f.Name()}); err != nil {
		return 0, err
	}
	if e.crashBytes >= 0 && int64(len(p)) > e.crashBytes {
		n, _ := f.f.Write(p[:e.crashBytes])
		e.crashBytes = 0
		e.crash()
		return n, ErrCrashed
	}
	if e.spaceBytes >= 0 && int64(len(p)) > e.spaceBytes {
		n, err := f.f.Write(p[:e.spaceBytes])
		e.spaceBytes -= int64(n)
		if err == nil {
			err = &fs.PathError{Op: "write", Path: f.f.Name(), Err: syscall.ENOSPC}
		}
		return n, err
	}
	n, err := f.f.Write(p)
	if e.crashBytes >= 0 {
		e.crashBytes -= int64(n)
	}
	if e.spaceBytes >= 0 {
		e.spaceBytes -= int64(n)
	}
	return n, err
}

func (f *file) Sync() error {
	return f.e.do(Sync, f.f.Name(), func() error {
		if err := f.e.syncFault("sync", f.f.Name()); err != nil {
			return err
		}
		return f.f.Sync()
	})
}

// Close is no change to the disk: it is not counted, and after a crash
// the file is closed already.
func (f *file) Close() error {
	e := f.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.crashed {
		return ErrCrashed
	}
	delete(e.files, f)
	return f.f.Close()
}

func (f *file) Stat() (fi fs.FileInfo, err error) {
	err = f.e.do(Read, f.f.Name(), func() error { fi, err = f.f.Stat(); return err })
	return fi, err
}

func (f *file) Chmod(mode fs.FileMode) error {
	return f.e.do(Chmod, f.f.Name(), func() error { return f.f.Chmod(mode) })
}

func (f *file) Chown(uid, gid int) error {
	return f.e.do(Chown, f.f.Name(), func() error { return f.f.Chown(uid, gid) })
}

// lock is a lock an FS handed out: a crash releases it, as the kernel
// releases a dead process's.
type lock struct {
	e *FS
	c io.Closer
}

func (l *lock) Close() error {
	e := l.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.locks[l] {
		return nil // released by a crash
	}
	delete(e.locks, l)
	return l.c.Close()
}
