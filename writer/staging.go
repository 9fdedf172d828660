// Package writer writes sstable components crash-safely: every file goes
// into a staging directory beside the destination, is fsynced, the staging
// directory is fsynced, and only then are the files renamed into place.
// It also holds the Data.db chunk writer (compressed chunks with their CRC32
// and CompressionInfo.db, or raw data with CRC.db) and the small components
// (TOC.txt, Digest.crc32).
//
// Rename protocol. When the destination directory does not exist yet, the
// staging directory itself is renamed onto it: one rename(2), so a crash
// leaves either nothing or the complete sstable. When it exists (a table's
// data directory), the components are renamed one by one with Data.db last:
// every reader (ours, Cassandra's) finds an sstable through its Data.db, so
// until that final rename no sstable is visible; a crash between renames can
// leave inert component files without Data.db, which NewStaging then reports
// as a conflict instead of overwriting.
package writer

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrInjectedCrash is returned once a crash injected with Staging.CrashAfter
// fires. From then on the staging behaves like a killed process: nothing is
// written, flushed, renamed or cleaned up.
var ErrInjectedCrash = errors.New("writer: injected crash")

// stagingPrefix starts the name of every staging directory, so leftovers of
// a killed run are recognisable (and never look like sstables to a scan of
// the destination, which lives beside them, not above them).
const stagingPrefix = ".sstabletool-staging-"

// Staging is a directory beside the destination that receives the files of
// one sstable until Commit renames them into place.
type Staging struct {
	dest     string
	tmp      string
	destNew  bool // dest did not exist: rename the whole directory
	files    []*File
	names    []string
	done     bool
	crashed  bool
	budget   int64 // bytes left before an injected crash; <0 = none
	renames  int   // renames left before an injected crash; <0 = none
	syncDirs bool
	// mu guards the crash budget: Data.db is written by the chunk worker
	// while the caller writes Index.db.
	mu sync.Mutex
}

// NewStaging creates a staging directory for files that will end up in
// dest. prefix is the sstable's file-name prefix ("oa-1-big-"): if dest
// already holds any file starting with it, NewStaging refuses, so an
// existing sstable (or the leftovers of an interrupted rename) is never
// overwritten.
func NewStaging(dest, prefix string) (*Staging, error) {
	dest = filepath.Clean(dest)
	st := &Staging{dest: dest, budget: -1, renames: -1, syncDirs: true}
	fi, err := os.Stat(dest)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("output %s is not a directory", dest)
	case err == nil:
		ents, err := os.ReadDir(dest)
		if err != nil {
			return nil, fmt.Errorf("output directory: %w", err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), prefix) {
				return nil, fmt.Errorf("output directory %s already holds %s (sstable %s*); refusing to overwrite it", dest, e.Name(), prefix)
			}
		}
	case errors.Is(err, os.ErrNotExist):
		st.destNew = true
	default:
		return nil, fmt.Errorf("output directory: %w", err)
	}
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	st.tmp, err = os.MkdirTemp(parent, stagingPrefix+filepath.Base(dest)+"-")
	if err != nil {
		return nil, fmt.Errorf("staging directory: %w", err)
	}
	if st.destNew {
		// MkdirTemp makes it private; it becomes the data directory.
		if err := os.Chmod(st.tmp, 0o755); err != nil {
			os.Remove(st.tmp)
			return nil, fmt.Errorf("staging directory: %w", err)
		}
	}
	return st, nil
}

// Dir is the staging directory: files are there until Commit.
func (s *Staging) Dir() string { return s.tmp }

// Dest is the destination directory.
func (s *Staging) Dest() string { return s.dest }

// CrashAfter injects a crash for tests: once bytes more bytes have been
// written (across all files), or once renames more renames have been done
// during Commit, the operation fails with ErrInjectedCrash and the staging
// stops touching the disk, as if the process had been killed. A negative
// value disables that trigger.
func (s *Staging) CrashAfter(bytes int64, renames int) {
	s.budget, s.renames = bytes, renames
}

// Create creates a file in the staging directory.
func (s *Staging) Create(name string) (*File, error) {
	if s.crashed {
		return nil, ErrInjectedCrash
	}
	if s.done {
		return nil, errors.New("writer: staging already committed or aborted")
	}
	if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return nil, fmt.Errorf("writer: bad component file name %q", name)
	}
	f, err := os.OpenFile(filepath.Join(s.tmp, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	wf := &File{st: s, f: f, name: name}
	wf.bw = bufio.NewWriterSize(wf.raw(), 256<<10)
	s.files = append(s.files, wf)
	s.names = append(s.names, name)
	return wf, nil
}

// WriteFile creates name in the staging directory with content b, synced.
func (s *Staging) WriteFile(name string, b []byte) error {
	f, err := s.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.abandon()
		return err
	}
	return f.Close()
}

// Commit makes the staged files visible in the destination: every file must
// have been closed (which fsyncs it); the staging directory is fsynced, the
// files are renamed (see the package comment for the order) and the
// destination and its parent are fsynced.
func (s *Staging) Commit() error {
	if s.crashed {
		return ErrInjectedCrash
	}
	if s.done {
		return errors.New("writer: staging already committed or aborted")
	}
	for _, f := range s.files {
		if !f.closed {
			return fmt.Errorf("writer: %s was not closed before Commit", f.name)
		}
	}
	if err := syncDir(s.tmp); err != nil {
		return err
	}
	parent := filepath.Dir(s.dest)
	if s.destNew {
		if err := s.rename(s.tmp, s.dest); err != nil {
			return err
		}
		s.done = true
		return syncDir(parent)
	}
	order := make([]string, 0, len(s.names))
	var data []string
	for _, n := range s.names {
		if strings.HasSuffix(n, "-Data.db") {
			data = append(data, n)
		} else {
			order = append(order, n)
		}
	}
	order = append(order, data...)
	for _, n := range order {
		if _, err := os.Lstat(filepath.Join(s.dest, n)); err == nil {
			return fmt.Errorf("writer: %s appeared in %s while converting; not overwriting it", n, s.dest)
		}
		if err := s.rename(filepath.Join(s.tmp, n), filepath.Join(s.dest, n)); err != nil {
			return err
		}
	}
	if err := syncDir(s.dest); err != nil {
		return err
	}
	s.done = true
	return os.Remove(s.tmp)
}

func (s *Staging) rename(from, to string) error {
	if s.renames == 0 {
		s.crashed = true
		return ErrInjectedCrash
	}
	if s.renames > 0 {
		s.renames--
	}
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("writer: moving into place: %w", err)
	}
	return nil
}

// Abort removes the staging directory and everything in it. After an
// injected crash it does nothing (a killed process cleans nothing up).
func (s *Staging) Abort() error {
	if s.crashed || s.done {
		return nil
	}
	s.done = true
	for _, f := range s.files {
		f.abandon()
	}
	return os.RemoveAll(s.tmp)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writer: fsync directory %s: %w", dir, err)
	}
	return nil
}

// File is one component being written into a staging directory. Writes are
// buffered; Close flushes, fsyncs and closes.
type File struct {
	st     *Staging
	f      *os.File
	bw     *bufio.Writer
	name   string
	n      int64
	closed bool
}

// Name is the file's name.
func (f *File) Name() string { return f.name }

// Path is the file's current path (in the staging directory).
func (f *File) Path() string { return filepath.Join(f.st.tmp, f.name) }

// Pos is the number of bytes written so far.
func (f *File) Pos() int64 { return f.n }

// Write buffers p.
func (f *File) Write(p []byte) (int, error) {
	if f.closed {
		return 0, fmt.Errorf("writer: %s: write after close", f.name)
	}
	st := f.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.crashed {
		return 0, ErrInjectedCrash
	}
	if st.budget >= 0 && int64(len(p)) > st.budget {
		// The "kill": what was written so far reaches the file, the rest
		// never does.
		k := int(st.budget)
		f.bw.Write(p[:k])
		f.bw.Flush()
		f.n += int64(k)
		st.budget = 0
		st.crashed = true
		return k, ErrInjectedCrash
	}
	if st.budget >= 0 {
		st.budget -= int64(len(p))
	}
	n, err := f.bw.Write(p)
	f.n += int64(n)
	return n, err
}

// Close flushes the buffer, fsyncs and closes the file.
func (f *File) Close() error {
	if f.closed {
		return nil
	}
	if err := f.bw.Flush(); err != nil {
		return fmt.Errorf("writer: %s: %w", f.name, err)
	}
	if f.st.crashed {
		return ErrInjectedCrash
	}
	if err := f.f.Sync(); err != nil {
		return fmt.Errorf("writer: fsync %s: %w", f.name, err)
	}
	f.closed = true
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("writer: %s: %w", f.name, err)
	}
	return nil
}

func (f *File) abandon() {
	if !f.closed {
		f.closed = true
		f.f.Close()
	}
}

// raw is the unbuffered side of a File.
func (f *File) raw() *os.File { return f.f }
