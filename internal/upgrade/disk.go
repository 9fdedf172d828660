package upgrade

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// disk performs every change the upgrade makes to a data directory
// through one vfs.FS, the seam where tests stop it at any one of them (a
// file created, bytes written, an fsync, a log record appended, a file
// removed) exactly as a kill would, or fail an fsync or fill the disk
// (internal/vfs/errorfs).
type disk struct {
	fs vfs.FS
}

func newDisk(fsys vfs.FS) *disk { return &disk{fs: vfs.Or(fsys)} }

func (d *disk) create(path string, perm fs.FileMode) (vfs.File, error) {
	return d.fs.Create(path, perm)
}

func (d *disk) sync(f vfs.File) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return nil
}

func (d *disk) syncDir(dir string) error {
	if err := d.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// remove unlinks a file; one already gone is not an error (a rerun
// finishing a deletion a killed run began).
func (d *disk) remove(path string) error {
	if err := d.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// outFile is one file being written: buffered, fsynced on Close.
type outFile struct {
	d      *disk
	f      vfs.File
	bw     *bufio.Writer
	closed bool
}

func (d *disk) newOutFile(path string, o vfs.Owner) (*outFile, error) {
	f, err := d.create(path, 0o600)
	if err != nil {
		return nil, err
	}
	if err := o.Give(f); err != nil {
		f.Close()
		return nil, err
	}
	return &outFile{d: d, f: f, bw: bufio.NewWriterSize(f, 256<<10)}, nil
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
func (d *disk) appendLine(path, line string, o vfs.Owner) error {
	_, statErr := d.fs.Lstat(path)
	existed := statErr == nil
	f, err := d.fs.OpenAppend(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if !existed {
		if err := o.Give(f); err != nil {
			return err
		}
	}
	if _, err := f.Write([]byte(line + "\n")); err != nil {
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
