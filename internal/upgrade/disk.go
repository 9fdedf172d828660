package upgrade

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// ErrInjectedCrash is returned once a crash injected by a test fires:
// from then on nothing touches the disk, as if the process had been
// killed at that instant.
var ErrInjectedCrash = errors.New("upgrade: injected crash")

// disk performs every change the upgrade makes to a data directory, so
// that a test can stop it at any one of them (a file created, bytes
// written, an fsync, a log record appended, a file removed) exactly as a
// kill would: what was done stays, nothing after it happens.
type disk struct {
	mu      sync.Mutex
	ops     int64 // changes left before the crash; <0: none injected
	bytes   int64 // bytes left before the crash; <0: none injected
	crashed bool
	// trace, when set, hears every change before it is made.
	trace func(op, path string)
}

func newDisk() *disk { return &disk{ops: -1, bytes: -1} }

// step accounts one change; it fails once the crash point is reached.
func (d *disk) step(op, path string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.crashed {
		return ErrInjectedCrash
	}
	if d.ops == 0 {
		d.crashed = true
		return ErrInjectedCrash
	}
	if d.ops > 0 {
		d.ops--
	}
	if d.trace != nil {
		d.trace(op, path)
	}
	return nil
}

func (d *disk) isCrashed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.crashed
}

// write writes p to f; with a byte budget, the crash may cut it short
// (a torn write).
func (d *disk) write(f *os.File, p []byte) (int, error) {
	d.mu.Lock()
	if d.crashed {
		d.mu.Unlock()
		return 0, ErrInjectedCrash
	}
	if d.bytes >= 0 && int64(len(p)) > d.bytes {
		k := int(d.bytes)
		d.bytes = 0
		d.crashed = true
		d.mu.Unlock()
		n, _ := f.Write(p[:k])
		return n, ErrInjectedCrash
	}
	if d.bytes >= 0 {
		d.bytes -= int64(len(p))
	}
	d.mu.Unlock()
	return f.Write(p)
}

func (d *disk) create(path string, perm fs.FileMode) (*os.File, error) {
	if err := d.step("create", path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

func (d *disk) sync(f *os.File) error {
	if err := d.step("fsync", f.Name()); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return nil
}

func (d *disk) syncDir(dir string) error {
	if err := d.step("fsync-dir", dir); err != nil {
		return err
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// remove unlinks a file; one already gone is not an error (a rerun
// finishing a deletion a killed run began).
func (d *disk) remove(path string) error {
	if err := d.step("unlink", path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// own gives f the mode and, where they differ and the process may, the
// owner of the file it replaces.
func (d *disk) own(f *os.File, o owner) error {
	if err := d.step("chmod", f.Name()); err != nil {
		return err
	}
	if err := f.Chmod(o.mode); err != nil {
		return fmt.Errorf("chmod %s: %w", f.Name(), err)
	}
	if o.uid < 0 {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == o.uid && int(st.Gid) == o.gid {
		return nil
	}
	if err := d.step("chown", f.Name()); err != nil {
		return err
	}
	if err := f.Chown(o.uid, o.gid); err != nil {
		return fmt.Errorf("giving %s the owner of the sstable it replaces (uid %d, gid %d): %w", f.Name(), o.uid, o.gid, err)
	}
	return nil
}

// owner is the mode and owner new files take.
type owner struct {
	mode     fs.FileMode
	uid, gid int // -1: unknown
}

func ownerOf(fi fs.FileInfo) owner {
	o := owner{mode: fi.Mode().Perm(), uid: -1, gid: -1}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		o.uid, o.gid = int(st.Uid), int(st.Gid)
	}
	return o
}

// outFile is one file being written: buffered, fsynced on Close.
type outFile struct {
	d      *disk
	f      *os.File
	bw     *bufio.Writer
	closed bool
}

type rawWriter struct {
	d *disk
	f *os.File
}

func (w rawWriter) Write(p []byte) (int, error) { return w.d.write(w.f, p) }

func (d *disk) newOutFile(path string, o owner) (*outFile, error) {
	f, err := d.create(path, 0o600)
	if err != nil {
		return nil, err
	}
	if err := d.own(f, o); err != nil {
		f.Close()
		return nil, err
	}
	return &outFile{d: d, f: f, bw: bufio.NewWriterSize(rawWriter{d, f}, 256<<10)}, nil
}

func (w *outFile) Write(p []byte) (int, error) { return w.bw.Write(p) }

func (w *outFile) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.bw.Flush()
	if err == nil {
		err = w.d.sync(w.f)
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abandon closes without flushing (the file is about to be removed).
func (w *outFile) abandon() {
	if !w.closed {
		w.closed = true
		w.f.Close()
	}
}

// appendLine appends one record line to a transaction log and fsyncs it,
// as LogReplica.append does (FileUtils.appendAndSync): the file is
// created by the first record, and then its directory is fsynced too.
func (d *disk) appendLine(path, line string, o owner) error {
	_, statErr := os.Lstat(path)
	existed := statErr == nil
	if err := d.step("log-append", path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if !existed {
		if err := d.own(f, o); err != nil {
			return err
		}
	}
	if _, err := d.write(f, []byte(line+"\n")); err != nil {
		return err
	}
	if err := d.sync(f); err != nil {
		return err
	}
	if !existed {
		return d.syncDir(dirOf(path))
	}
	return nil
}

func dirOf(path string) string { return filepath.Dir(path) }
