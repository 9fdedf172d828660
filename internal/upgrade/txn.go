package upgrade

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
)

// componentsWritten is how many files convert writes for one sstable
// (Data, Index, Summary, Filter, Statistics, Digest, TOC, and
// CompressionInfo or CRC): the file count of the ADD record, as Cassandra
// writes a new sstable's component count there before any file exists.
const componentsWritten = 8

// txn replaces one sstable by its rewrite in the same directory, the way
// Cassandra's LifecycleTransaction does, with the same log:
//
//  1. ADD the new sstable (the log is created, fsynced, the directory too);
//  2. write its files under their final names, each fsynced, then the
//     directory, and verify it;
//  3. REMOVE the old one (its newest file time and file count);
//  4. COMMIT;
//  5. delete the old sstable's files, oldest first, fsync the directory;
//  6. delete the log, fsync the directory.
//
// Up to 4 a crash leaves a log without COMMIT: the new files are deleted
// (by the next run, or Cassandra's startup) and the old sstable is as it
// was. From 4 on the log is committed: the old files are deleted. Either
// way one copy remains, and a complete one exists at every instant.
type txn struct {
	d      *disk
	t      *Table
	log    string // the log's path
	logOwn vfs.Owner
	// added are the new sstables, each ADDed before its first file.
	added []format.Descriptor
	out   *output
}

// output creates the new sstable's files in the table directory.
type output struct {
	d     *disk
	dir   string
	own   vfs.Owner
	mu    sync.Mutex
	files []*outFile
}

func (o *output) Create(name string) (io.WriteCloser, error) {
	f, err := o.d.newOutFile(filepath.Join(o.dir, name), o.own)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.files = append(o.files, f)
	o.mu.Unlock()
	return f, nil
}

func (o *output) abandon() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range o.files {
		f.abandon()
	}
}

// recordPath is what a log record names: the directory with symlinks
// resolved (Cassandra writes canonical paths) and the file name prefix.
func (t *Table) recordPath(d format.Descriptor) string {
	return filepath.Join(t.canon, d.Prefix())
}

// sstableFiles lists the files whose names start with prefix in dir, with
// the newest modification time in milliseconds (as a REMOVE record stores
// it).
func sstableFiles(dir, prefix string) (files []string, newest int64, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, 0, err
		}
		files = append(files, e.Name())
		newest = max(newest, txnlog.JavaModTime(fi))
	}
	return files, newest, nil
}

// deleteFiles deletes files oldest first, as LogFile.deleteRecordFiles
// does, so that a REMOVE record's newest time stays on disk until the last
// of them goes (Cassandra refuses a log whose REMOVE record no longer
// matches the disk).
func (d *disk) deleteFiles(files []txnlog.File) error {
	slices.SortStableFunc(files, func(a, b txnlog.File) int {
		switch {
		case a.ModTime < b.ModTime:
			return -1
		case a.ModTime > b.ModTime:
			return 1
		}
		return 0
	})
	for _, f := range files {
		if err := d.remove(f.Path); err != nil {
			return err
		}
	}
	return nil
}

// withTimes stats files for deleteFiles.
func withTimes(dir string, names []string) []txnlog.File {
	var out []txnlog.File
	for _, n := range names {
		p := filepath.Join(dir, n)
		f := txnlog.File{Path: p}
		if fi, err := os.Stat(p); err == nil {
			f.ModTime = txnlog.JavaModTime(fi)
		}
		out = append(out, f)
	}
	return out
}

// add writes the ADD record of a new sstable (the first record creates
// the log): from here on, whatever its files hold, a crash leaves them to
// be deleted. A rewrite may add several (scrub's second sstable of
// out-of-order partitions), as Cassandra's transaction updates several.
func (x *txn) add(d format.Descriptor) error {
	x.added = append(x.added, d)
	return x.d.appendLine(x.log, txnlog.NewRecord(txnlog.Add, x.t.recordPath(d), 0, componentsWritten).Raw, x.logOwn)
}

// rollback undoes an uncommitted transaction as Cassandra's abort does:
// ABORT is logged, the new sstable's files deleted, then the log.
func (x *txn) rollback() error {
	if x.out != nil {
		x.out.abandon()
	}
	if _, err := x.d.fs.Stat(x.log); errors.Is(err, fs.ErrNotExist) {
		return nil // the ADD record was never written: nothing exists
	}
	if err := x.d.appendLine(x.log, txnlog.NewRecord(txnlog.Abort, "", 0, 0).Raw, x.logOwn); err != nil {
		return err
	}
	for _, d := range x.added {
		names, _, err := sstableFiles(x.t.Dir, d.Prefix())
		if err != nil {
			return err
		}
		if err := x.d.deleteFiles(withTimes(x.t.Dir, names)); err != nil {
			return err
		}
	}
	if err := x.d.syncDir(x.t.Dir); err != nil {
		return err
	}
	if err := x.d.remove(x.log); err != nil {
		return err
	}
	return x.d.syncDir(x.t.Dir)
}

// commit replaces old by the new sstable: REMOVE and COMMIT are logged,
// the old files deleted, then the log. keep leaves the old sstable
// (sstableupgrade -k): only COMMIT is logged.
func (x *txn) commit(old format.Descriptor, keep bool) (removed []string, err error) {
	if !keep {
		names, newest, err := sstableFiles(x.t.Dir, old.Prefix())
		if err != nil {
			return nil, err
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%s: the sstable's files are gone", old.Path(format.ComponentData))
		}
		rec := txnlog.NewRecord(txnlog.Remove, x.t.recordPath(old), newest, len(names))
		if err := x.d.appendLine(x.log, rec.Raw, x.logOwn); err != nil {
			return nil, err
		}
		removed = names
	}
	if err := x.d.appendLine(x.log, txnlog.NewRecord(txnlog.Commit, "", 0, 0).Raw, x.logOwn); err != nil {
		return nil, err
	}
	if err := x.d.deleteFiles(withTimes(x.t.Dir, removed)); err != nil {
		return removed, err
	}
	if err := x.d.syncDir(x.t.Dir); err != nil {
		return removed, err
	}
	if err := x.d.remove(x.log); err != nil {
		return removed, err
	}
	return removed, x.d.syncDir(x.t.Dir)
}

// Recovery is what an upgrade found and did about a transaction log a
// killed run (or a killed Cassandra) left.
type Recovery struct {
	Log string `json:"log"`
	// Action: "finished" (the log was committed: the replaced sstable's
	// files were deleted), "rolled back" (not committed: the files of the
	// sstable it was writing were deleted), "left" (not an upgrade's, or
	// it names other directories: left for Cassandra's startup) or
	// "refused" (Cassandra would refuse it too; see Problem).
	Action  string   `json:"action"`
	Deleted []string `json:"deleted,omitempty"`
	// Kept is the sstable the transaction leaves (the new one if
	// finished, the old one if rolled back), when it names one.
	Kept    string `json:"kept,omitempty"`
	Problem string `json:"problem,omitempty"`
	Warning string `json:"warning,omitempty"`
}

// ownOps are the operations whose logs a run finishes or rolls back: the
// ones sstabletool's in-place rewrites name theirs after (upgrade, scrub,
// split as sstablesplit does, filter as a cleanup).
var ownOps = []string{txnlog.OpUpgrade, txnlog.OpScrub, txnlog.OpUnknown, txnlog.OpCleanup}

// recover finishes or rolls back the upgrade logs of t's directory
// exactly as Cassandra's startup would (txnlog.Log.Verify), and says what
// it did. dry only says what it would do.
func (d *disk) recover(t *Table, dry bool) ([]Recovery, error) {
	var out []Recovery
	for _, l := range t.Logs {
		rec := Recovery{Log: l.Replicas[0]}
		_, op, _, _ := txnlog.ParseName(l.Name)
		inDir := true
		for _, r := range l.Records {
			if r.Path != "" && filepath.Dir(filepath.Clean(r.Path)) != t.canon {
				inDir = false
			}
		}
		v := l.Verify()
		switch {
		case !slices.Contains(ownOps, op) || len(l.Replicas) != 1 || !inDir:
			rec.Action = "left"
			rec.Problem = "not the log of an sstable upgrade, scrub, split or filter in this directory alone; Cassandra's startup cleans it up"
			out = append(out, rec)
			continue
		case !v.OK:
			rec.Action = "refused"
			rec.Problem = "Cassandra would refuse to start with it too: " + v.Problem
			out = append(out, rec)
			continue
		}
		rec.Warning = v.Warning
		kept := txnlog.Remove
		rec.Action = "rolled back"
		if v.Committed {
			rec.Action, kept = "finished", txnlog.Add
		}
		for _, r := range l.Records {
			if r.Type == kept && r.Valid() {
				rec.Kept = filepath.Join(t.Dir, r.FileName()+format.ComponentData)
			}
		}
		for _, f := range v.Delete {
			rec.Deleted = append(rec.Deleted, f.Path)
		}
		if !dry {
			if err := d.deleteFiles(slices.Clone(v.Delete)); err != nil {
				return out, err
			}
			if err := d.syncDir(t.Dir); err != nil {
				return out, err
			}
			if err := d.remove(l.Replicas[0]); err != nil {
				return out, err
			}
			if err := d.syncDir(t.Dir); err != nil {
				return out, err
			}
		}
		out = append(out, rec)
	}
	return out, nil
}

// ensure convert.Output is what output implements.
var _ convert.Output = (*output)(nil)
