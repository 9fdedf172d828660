// Package vfs is the one seam between the write paths and the file
// system: the staging of internal/writer (and so convert and generate),
// internal/upgrade's in-place rewrite and every writer to come create,
// write, fsync, rename and remove files through an FS, never through the
// os package directly. Default is the operating system's; errorfs wraps
// any FS to inject the faults a writer must survive (a crash after any
// operation or in the middle of a write, an fsync that fails, a full
// disk), so that the tests of crash safety run every write path through
// the same code the commands run. The model is pebble's vfs package.
//
// A new writer takes an FS (nil meaning Default, see Or) and uses it for
// every change it makes to the disk; reads of the source it converts go
// through the readers (package reader), not here.
package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// File is a file open for writing.
type File interface {
	io.Writer
	// Name is the path the file was opened with.
	Name() string
	// Sync makes what was written durable (fsync).
	Sync() error
	Close() error
	Stat() (fs.FileInfo, error)
	Chmod(mode fs.FileMode) error
	Chown(uid, gid int) error
}

// Fd is f's descriptor, if it is the operating system's file.
func Fd(f File) (uintptr, bool) {
	if fd, ok := f.(interface{ Fd() uintptr }); ok {
		return fd.Fd(), true
	}
	return 0, false
}

// FS is the file operations a writer makes.
type FS interface {
	// Create creates a new file for writing; it fails if name exists.
	Create(name string, perm fs.FileMode) (File, error)
	// OpenAppend opens name for appending, creating it if it is missing
	// (a transaction log, appended to record by record).
	OpenAppend(name string, perm fs.FileMode) (File, error)
	ReadFile(name string) ([]byte, error)
	ReadDir(dir string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	MkdirAll(dir string, perm fs.FileMode) error
	// MkdirTemp creates a new directory in dir, named pattern with a
	// random string in place of its last "*" (or at its end), as
	// os.MkdirTemp does, and returns its path.
	MkdirTemp(dir, pattern string) (string, error)
	Rename(from, to string) error
	// Link makes newname a hard link to oldname (a snapshot of an sstable
	// about to be replaced, as Cassandra's snapshots are made).
	Link(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
	// SyncDir makes the entries created, renamed and removed in dir
	// durable (fsync of the directory).
	SyncDir(dir string) error
	// Lock takes an exclusive lock on dir, held until the returned Closer
	// is closed or the process dies, whichever comes first. It fails with
	// ErrLocked when a live process holds it, and with
	// errors.ErrUnsupported where the system has no such lock.
	Lock(dir string) (io.Closer, error)
}

// ErrLocked is Lock's error for a directory another process holds.
var ErrLocked = errors.New("locked by another process")

// Default is the operating system's file system.
var Default FS = osFS{}

// Or is fsys, or Default when fsys is nil: the FS of an options struct
// whose zero value means the real disk.
func Or(fsys FS) FS {
	if fsys == nil {
		return Default
	}
	return fsys
}

// WriteFile creates name (which must not exist) with data, as
// os.WriteFile does, through fsys. It does not fsync.
func WriteFile(fsys FS, name string, data []byte, perm fs.FileMode) error {
	f, err := fsys.Create(name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type osFS struct{}

func (osFS) Create(name string, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

func (osFS) OpenAppend(name string, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
}

func (osFS) ReadFile(name string) ([]byte, error)        { return os.ReadFile(name) }
func (osFS) ReadDir(dir string) ([]fs.DirEntry, error)   { return os.ReadDir(dir) }
func (osFS) Stat(name string) (fs.FileInfo, error)       { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error)      { return os.Lstat(name) }
func (osFS) MkdirAll(dir string, perm fs.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) MkdirTemp(dir, pattern string) (string, error) {
	return os.MkdirTemp(dir, pattern)
}
func (osFS) Rename(from, to string) error { return os.Rename(from, to) }
func (osFS) Link(from, to string) error   { return os.Link(from, to) }
func (osFS) Remove(name string) error     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error  { return os.RemoveAll(name) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (osFS) Lock(dir string) (io.Closer, error) { return lockDir(dir) }
