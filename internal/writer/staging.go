// Package writer writes sstable components crash-safely: every file goes
// into a hidden staging directory inside the destination, is fsynced, the
// staging directory is fsynced, and only then are the files renamed into
// place. Every operation goes through a vfs.FS (vfs.Default: the
// operating system's), the seam where tests inject crashes, fsync errors
// and a full disk (internal/vfs/errorfs). It also holds the Data.db chunk
// writer (compressed chunks with their CRC32 and CompressionInfo.db, or raw
// data with CRC.db) and the small components (TOC.txt, Digest.crc32).
//
// Staging inside the destination keeps every rename on one filesystem (a
// destination that is a mount point works), and keeps whatever a killed
// run leaves where the next run into the same destination finds it.
//
// Commit protocol. Once every file is written and fsynced, Commit writes a
// COMMIT marker into the staging directory (to a temporary name, fsynced,
// renamed, the directory fsynced) that lists the component files. From
// then on the commit is decided: the files are renamed into the
// destination one by one with Data.db last (every reader, ours and
// Cassandra's, finds an sstable through its Data.db, so none is visible
// until that final rename), the destination is fsynced, and the staging
// directory is removed. A crash therefore leaves one of two decidable
// states, which the next NewStaging into the same destination repairs and
// reports (Staging.Recovered): a staging directory without COMMIT (the
// write never finished: it is removed) or one with COMMIT (its remaining
// files are renamed into place, Data.db last, completing the sstable). A
// staging directory is only touched once its owner is gone: the owner
// holds an exclusive flock on it for its whole life, which the kernel
// drops when the process dies.
package writer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/vfs"
)

// StagingPrefix starts the name of every staging directory; scans skip
// them (format.StagingDirPrefix is the one definition).
const StagingPrefix = format.StagingDirPrefix

// commitMarker is the file whose presence in a staging directory says the
// commit was decided; it lists the component files, one per line.
const commitMarker = "COMMIT"

// ownerFile names the process that staged (for people reading a leftover).
const ownerFile = "OWNER"

// Staging is a hidden directory inside the destination that receives the
// files of one sstable until Commit renames them into place.
type Staging struct {
	fs          vfs.FS
	dest        string
	tmp         string
	destCreated bool      // NewStaging made dest: Abort removes it again if empty
	lock        io.Closer // nil where the system has no directory locks
	files       []*File
	names       []string
	done        bool
	recovered   []string
}

// StaleIndexError is an output directory that holds SAI or SASI files
// with the name of the sstable to be written there, and no Data.db: left
// by an sstable that is gone. Cassandra finds these files by name
// (IndexDescriptor.fileFor, DataTracker's SI_<index>.db) and checks only
// their framing, so it would take them for the index of the sstable
// written, whose rows they do not describe, and answer queries from them.
//
// Prefix is "" when the files are of several sstables' names (an output
// directory that must hold no sstable: split's and filter's --out).
type StaleIndexError struct {
	Dir, Prefix string
	Files       []string
}

func (e *StaleIndexError) Error() string {
	const drop = "convert, scrub, split and filter do with --drop-index-components"
	if e.Prefix == "" {
		rm := make([]string, len(e.Files))
		for i, f := range e.Files {
			rm[i] = filepath.Join(e.Dir, f)
		}
		return fmt.Sprintf("output directory %s holds index files of sstables whose Data.db is gone (%s): Cassandra would read them as the index of an sstable "+
			"written there under their name, whose rows they do not describe; remove them (rm %s; %s)", e.Dir, strings.Join(e.Files, ", "), strings.Join(rm, " "), drop)
	}
	return fmt.Sprintf("output directory %s holds index files of %s but no %sData.db (%s): Cassandra would read them as the index of the sstable written there, "+
		"whose rows they do not describe; remove them (rm %s; %s)",
		e.Dir, strings.TrimSuffix(e.Prefix, "-"), e.Prefix, strings.Join(e.Files, ", "), filepath.Join(e.Dir, e.Prefix+"*"), drop)
}

// allIndexFiles reports whether every name (with prefix) is an SAI or
// SASI component.
func allIndexFiles(names []string, prefix string) bool {
	for _, n := range names {
		if _, ok := format.ParseIndexComponent(strings.TrimPrefix(n, prefix)); !ok {
			return false
		}
	}
	return true
}

// DropStaleIndexFiles removes, through fsys, the SAI and SASI files in
// dest named for the sstable prefix when no Data.db of that name is there
// (what NewStaging refuses with a *StaleIndexError), and returns their
// names. It removes nothing while Data.db is there: those files are that
// sstable's.
func DropStaleIndexFiles(fsys vfs.FS, dest, prefix string) ([]string, error) {
	fsys = vfs.Or(fsys)
	ents, err := fsys.ReadDir(dest)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if name == format.ComponentData {
			return nil, nil
		}
		if _, ok := format.ParseIndexComponent(name); ok && !e.IsDir() {
			stale = append(stale, e.Name())
		}
	}
	for _, n := range stale {
		if err := fsys.Remove(filepath.Join(dest, n)); err != nil {
			return nil, err
		}
	}
	if len(stale) > 0 {
		if err := fsys.SyncDir(dest); err != nil {
			return nil, err
		}
	}
	return stale, nil
}

// NewStaging creates, through fsys (nil: vfs.Default), a staging directory
// for files that will end up in dest (created if missing). prefix is the
// sstable's file-name prefix ("oa-1-big-"). It first repairs what killed
// runs left in dest (see the package comment; Recovered says what it did).
// If dest then holds any file starting with prefix, NewStaging refuses: an
// existing sstable is never overwritten.
func NewStaging(fsys vfs.FS, dest, prefix string) (*Staging, error) {
	fsys = vfs.Or(fsys)
	dest = filepath.Clean(dest)
	st := &Staging{fs: fsys, dest: dest}
	fi, err := fsys.Stat(dest)
	switch {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("output %s is not a directory", dest)
	case errors.Is(err, os.ErrNotExist):
		if err := fsys.MkdirAll(dest, 0o755); err != nil {
			return nil, fmt.Errorf("output directory: %w", err)
		}
		st.destCreated = true
	case err != nil:
		return nil, fmt.Errorf("output directory: %w", err)
	}
	if st.recovered, err = Recover(fsys, dest); err != nil {
		return nil, err
	}
	ents, err := fsys.ReadDir(dest)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	var partial []string
	hasData := false
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			partial = append(partial, e.Name())
			hasData = hasData || strings.HasSuffix(e.Name(), "-Data.db")
		}
	}
	switch {
	case hasData:
		err := fmt.Errorf("output directory %s already holds %sData.db (%s); refusing to overwrite it", dest, prefix, strings.Join(partial, ", "))
		if len(st.recovered) > 0 {
			err = fmt.Errorf("%w (before looking, %s)", err, strings.Join(st.recovered, "; "))
		}
		return nil, err
	case len(partial) > 0 && allIndexFiles(partial, prefix):
		return nil, &StaleIndexError{Dir: dest, Prefix: prefix, Files: partial}
	case len(partial) > 0:
		return nil, fmt.Errorf("output directory %s holds %s but no %sData.db, and no staging directory there holds the rest: "+
			"an interrupted copy or an older sstabletool left them; no sstable is visible without Data.db, so remove them (rm %s) and run again",
			dest, strings.Join(partial, ", "), prefix, filepath.Join(dest, prefix+"*"))
	}
	st.tmp, err = fsys.MkdirTemp(dest, StagingPrefix+prefix)
	if err != nil {
		return nil, fmt.Errorf("staging directory: %w", err)
	}
	if st.lock, err = fsys.Lock(st.tmp); errors.Is(err, errors.ErrUnsupported) {
		st.lock, err = nil, nil
	}
	if err != nil {
		fsys.RemoveAll(st.tmp)
		return nil, fmt.Errorf("staging directory: %w", err)
	}
	owner := fmt.Sprintf("pid %d\n", os.Getpid())
	if err := vfs.WriteFile(fsys, filepath.Join(st.tmp, ownerFile), []byte(owner), 0o644); err != nil {
		st.Abort()
		return nil, fmt.Errorf("staging directory: %w", err)
	}
	return st, nil
}

// Recovered says what NewStaging repaired in the destination: one line per
// leftover of a killed run it removed or completed.
func (s *Staging) Recovered() []string { return s.recovered }

// Recover repairs what killed runs left in dest: each staging directory
// whose owner is gone is completed (it holds a COMMIT marker: its files go
// into place, Data.db last) or removed (it does not). It returns one line
// per leftover. Staging directories of running processes are left alone
// (and every one where the system cannot tell a dead owner from a live
// one).
func Recover(fsys vfs.FS, dest string) ([]string, error) {
	fsys = vfs.Or(fsys)
	ents, err := fsys.ReadDir(dest)
	if err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	var notes []string
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), StagingPrefix) {
			continue
		}
		dir := filepath.Join(dest, e.Name())
		lock, err := fsys.Lock(dir)
		if errors.Is(err, vfs.ErrLocked) || errors.Is(err, errors.ErrUnsupported) {
			continue // its owner is still running (or may be)
		}
		if err != nil {
			return notes, fmt.Errorf("staging directory %s: %w", dir, err)
		}
		note, err := recoverOne(fsys, dest, dir)
		lock.Close()
		if err != nil {
			return notes, err
		}
		notes = append(notes, note)
	}
	return notes, nil
}

func recoverOne(fsys vfs.FS, dest, dir string) (string, error) {
	names, err := readMarker(fsys, dir)
	if errors.Is(err, os.ErrNotExist) {
		size := dirSize(fsys, dir)
		if err := fsys.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("removing the unfinished staging directory %s: %w", dir, err)
		}
		return fmt.Sprintf("removed %s (%d bytes), left by a run killed before its sstable was complete", dir, size), nil
	}
	if err != nil {
		return "", fmt.Errorf("staging directory %s: %w", dir, err)
	}
	moved, err := moveInto(fsys, dir, dest, names)
	if err != nil {
		return "", fmt.Errorf("completing the interrupted commit in %s: %w", dir, err)
	}
	if err := syncDir(fsys, dest); err != nil {
		return "", err
	}
	if err := fsys.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("removing %s: %w", dir, err)
	}
	return fmt.Sprintf("completed the commit a killed run left in %s: moved %d of %d files into place (%s)",
		dir, moved, len(names), dataName(names)), nil
}

func dataName(names []string) string {
	for _, n := range names {
		if strings.HasSuffix(n, "-Data.db") {
			return n
		}
	}
	return strings.Join(names, ", ")
}

func dirSize(fsys vfs.FS, dir string) int64 {
	var n int64
	ents, _ := fsys.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			n += dirSize(fsys, filepath.Join(dir, e.Name()))
		} else if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func readMarker(fsys vfs.FS, dir string) ([]string, error) {
	b, err := fsys.ReadFile(filepath.Join(dir, commitMarker))
	if err != nil {
		return nil, err
	}
	text := string(b)
	if !strings.HasSuffix(text, "end\n") {
		return nil, fmt.Errorf("%s is incomplete", commitMarker)
	}
	var names []string
	for _, n := range strings.Split(strings.TrimSuffix(text, "end\n"), "\n") {
		if n == "" {
			continue
		}
		if n != filepath.Base(n) || strings.HasPrefix(n, ".") {
			return nil, fmt.Errorf("%s names %q, not a component file", commitMarker, n)
		}
		names = append(names, n)
	}
	return names, nil
}

// moveInto renames the named files from dir into dest, Data.db last
// (Partitions.db just before it); a
// file already in dest and no longer in dir was moved before a crash.
// It returns how many it moved.
func moveInto(fsys vfs.FS, dir, dest string, names []string) (int, error) {
	// Readers find an sstable by its Data.db (format.Find also by a BTI
	// sstable's Partitions.db, to report one whose Data.db is lost): both
	// go last, Data.db the very last, so that until the commit is complete
	// nothing reads as an sstable, and for one rename at most a trie
	// index names an sstable whose Data.db is not there yet.
	rank := func(n string) int {
		switch {
		case strings.HasSuffix(n, "-Data.db"):
			return 2
		case strings.HasSuffix(n, "-Partitions.db"):
			return 1
		}
		return 0
	}
	order := slices.Clone(names)
	slices.SortStableFunc(order, func(a, b string) int { return rank(a) - rank(b) })
	moved := 0
	for _, n := range order {
		from, to := filepath.Join(dir, n), filepath.Join(dest, n)
		_, ferr := fsys.Lstat(from)
		_, terr := fsys.Lstat(to)
		switch {
		case ferr == nil && terr == nil:
			return moved, fmt.Errorf("writer: %s appeared in %s while converting; not overwriting it", n, dest)
		case ferr != nil && terr == nil:
			continue // moved before the crash
		case ferr != nil:
			return moved, fmt.Errorf("writer: %s is neither staged nor in place: %w", n, ferr)
		}
		if err := rename(fsys, from, to); err != nil {
			return moved, err
		}
		moved++
	}
	return moved, nil
}

// Output creates files in the staging directory through the Output
// interface: an SSTableWriter given it (NewSSTableWriterTo) writes its
// sstable into this staging, so that several sstables commit at once.
func (s *Staging) Output() Output { return stagingOutput{s} }

// Dir is the staging directory: files are there until Commit.
func (s *Staging) Dir() string { return s.tmp }

// Dest is the destination directory.
func (s *Staging) Dest() string { return s.dest }

// Create creates a file in the staging directory.
func (s *Staging) Create(name string) (*File, error) {
	if s.done {
		return nil, errors.New("writer: staging already committed or aborted")
	}
	if name != filepath.Base(name) || strings.HasPrefix(name, ".") || name == commitMarker || name == ownerFile {
		return nil, fmt.Errorf("writer: bad component file name %q", name)
	}
	f, err := s.fs.Create(filepath.Join(s.tmp, name), 0o644)
	if err != nil {
		return nil, err
	}
	wf := &File{st: s, f: f, name: name, wb: vfs.NewWriteback(f)}
	wf.bw = bufio.NewWriterSize(f, 256<<10)
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
// COMMIT marker written, the files renamed (see the package comment for the
// order), the destination fsynced and the staging directory removed.
func (s *Staging) Commit() error {
	if s.done {
		return errors.New("writer: staging already committed or aborted")
	}
	for _, f := range s.files {
		if !f.closed {
			return fmt.Errorf("writer: %s was not closed before Commit", f.name)
		}
	}
	if err := syncDir(s.fs, s.tmp); err != nil {
		return err
	}
	if err := s.writeMarker(); err != nil {
		return err
	}
	if _, err := moveInto(s.fs, s.tmp, s.dest, s.names); err != nil {
		return err
	}
	if err := syncDir(s.fs, s.dest); err != nil {
		return err
	}
	s.done = true
	if err := s.fs.RemoveAll(s.tmp); err != nil {
		return fmt.Errorf("writer: removing the staging directory: %w", err)
	}
	s.unlock()
	return syncDir(s.fs, s.dest)
}

// writeMarker decides the commit: COMMIT is written under another name,
// fsynced and renamed, so it exists only whole.
func (s *Staging) writeMarker() error {
	var b strings.Builder
	for _, n := range s.names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	b.WriteString("end\n")
	tmp := filepath.Join(s.tmp, commitMarker+".tmp")
	f, err := s.fs.Create(tmp, 0o644)
	if err != nil {
		return fmt.Errorf("writer: commit marker: %w", err)
	}
	_, err = io.WriteString(f, b.String())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writer: commit marker: %w", err)
	}
	if err := rename(s.fs, tmp, filepath.Join(s.tmp, commitMarker)); err != nil {
		return err
	}
	return syncDir(s.fs, s.tmp)
}

func rename(fsys vfs.FS, from, to string) error {
	if err := fsys.Rename(from, to); err != nil {
		return fmt.Errorf("writer: moving into place: %w", err)
	}
	return nil
}

// Abort removes the staging directory and everything in it, and the
// destination too when NewStaging created it and it is still empty.
func (s *Staging) Abort() error {
	if s.done {
		return nil
	}
	s.done = true
	for _, f := range s.files {
		f.abandon()
	}
	err := s.fs.RemoveAll(s.tmp)
	s.unlock()
	if s.destCreated {
		s.fs.Remove(s.dest) // only if empty
	}
	return err
}

func (s *Staging) unlock() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

func syncDir(fsys vfs.FS, dir string) error {
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("writer: fsync directory %s: %w", dir, err)
	}
	return nil
}

// File is one component being written into a staging directory. Writes are
// buffered; Close flushes, fsyncs and closes.
type File struct {
	st     *Staging
	f      vfs.File
	bw     *bufio.Writer
	name   string
	n      int64
	closed bool
	wb     vfs.Writeback // the disk writes what was flushed as it comes
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
	n, err := f.bw.Write(p)
	f.n += int64(n)
	f.wb.Written(f.n - int64(f.bw.Buffered()))
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

// NextGeneration is the integer sstable id after every one in dir ("1"
// in an empty or missing directory), for a new sstable beside others.
func NextGeneration(fsys vfs.FS, dir string) (string, error) {
	ents, err := vfs.Or(fsys).ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	n := 0
	for _, e := range ents {
		if d, _, err := format.ParseDescriptor(e.Name()); err == nil {
			if g, ok := format.SequenceGeneration(d.Generation); ok {
				n = max(n, g)
			}
		}
	}
	return strconv.Itoa(n + 1), nil
}
