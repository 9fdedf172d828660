// Package tablefiles lists a table directory's files the way Cassandra's
// LifecycleTransaction sees them (db/lifecycle/LogAwareFileLister.java):
// every file final, except those a transaction log marks as temporary (the
// sstables an unfinished or aborted transaction was writing, or those a
// committed one replaced), and the logs themselves; and it cleans up an
// unfinished transaction's leftovers as Cassandra's startup does
// (LogTransaction.removeUnfinishedLeftovers). sstableutil is built on both;
// so are sstabletool's util, and the cleanup level-reset and relevel make
// first, as sstablelevelreset and sstableofflinerelevel do.
//
// The logs are read and judged by internal/format/txnlog; this package
// only applies the lister's rules to a directory's listing, and makes the
// cleanup's deletions through internal/vfs.
package tablefiles

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
)

// Kind is Directories.FileType.
type Kind int

const (
	Final     Kind = iota // a live file
	Temporary             // a file a transaction log says is going (deleted on startup)
	TxnLog                // a transaction log
)

func (k Kind) String() string {
	switch k {
	case Final:
		return "final"
	case Temporary:
		return "temporary"
	case TxnLog:
		return "txn log"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MarshalText gives JSON the kind's name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// File is one file of a table directory.
type File struct {
	// Path is the file's canonical path (the directory's symlinks
	// resolved), as sstableutil prints it.
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Log is, for a temporary file, the name of the log that makes it so.
	Log string `json:"log,omitempty"`
	// Why says, for a temporary file, what the log says of it.
	Why string `json:"why,omitempty"`
}

// ListError is a directory whose files Cassandra could not list: a
// transaction log that does not verify, or one whose REMOVEd sstables are
// partly gone while it has not completed. Cassandra's sstableutil fails on
// it, and the node would not start.
type ListError struct {
	Dir, Log, Problem string
}

func (e *ListError) Error() string {
	return fmt.Sprintf("failed to list files in %s: transaction log %s: %s", e.Dir, e.Log, e.Problem)
}

// List lists the files of dir (not its subdirectories), sorted by path, as
// LogAwareFileLister does: every file that is no transaction log is final;
// then each log's records that name sstables in dir make the files whose
// names start with their prefix temporary, those of its REMOVE records
// when the log is committed, else those of its ADD records. A log that
// does not verify, or that has not completed while some file of its
// REMOVE records is gone, is a *ListError.
func List(dir string) ([]File, error) {
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	if canon, err = filepath.Abs(canon); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(canon)
	if err != nil {
		return nil, err
	}
	kinds := map[string]*File{}
	var names, logs []string
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		n := e.Name()
		if txnlog.IsLogName(n) {
			logs = append(logs, n)
			continue
		}
		names = append(names, n)
		kinds[n] = &File{Path: filepath.Join(canon, n), Kind: Final}
	}
	slices.Sort(logs)
	for _, name := range logs {
		l, err := txnlog.Read(filepath.Join(canon, name))
		if err != nil {
			return nil, err
		}
		if err := classify(canon, l, names, kinds); err != nil {
			return nil, err
		}
		names = append(names, name)
		kinds[name] = &File{Path: filepath.Join(canon, name), Kind: TxnLog}
	}
	out := make([]File, 0, len(kinds))
	for _, f := range kinds {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// classify is LogAwareFileLister.classifyFiles for one log of dir.
func classify(dir string, l *txnlog.Log, names []string, kinds map[string]*File) error {
	v := l.Verify()
	if !v.OK {
		return &ListError{Dir: dir, Log: l.Name, Problem: "some records failed verification: " + v.Problem}
	}
	recs := l.Records
	if v.Warning != "" {
		// The last record is corrupt or incomplete: Cassandra takes it
		// for invalid, and so for no record.
		recs = recs[:len(recs)-1]
	}
	// filesOf is LogFile.getFilesOfType: per valid record of type t whose
	// sstable is in dir, the files listed whose names start with its
	// prefix.
	filesOf := func(t txnlog.Type) map[int][]string {
		out := map[int][]string{}
		for i, r := range recs {
			if r.Type != t || !r.Valid() || r.Checksum != r.ComputeChecksum() || !contained(dir, r.Path) {
				continue
			}
			for _, n := range names {
				if strings.HasPrefix(n, r.FileName()) {
					out[i] = append(out[i], n)
				}
			}
			if out[i] == nil {
				out[i] = []string{}
			}
		}
		return out
	}
	oldFiles, newFiles := filesOf(txnlog.Remove), filesOf(txnlog.Add)
	last := len(l.Records) - 1
	committed := v.Warning == "" && last >= 0 && l.Records[last].Type == txnlog.Commit
	aborted := v.Warning == "" && last >= 0 && l.Records[last].Type == txnlog.Abort
	if !committed && !aborted {
		for i, fs := range oldFiles {
			if recs[i].NumFiles > len(fs) {
				return &ListError{Dir: dir, Log: l.Name, Problem: fmt.Sprintf("inconsistent disk state: sstable %s, which the unfinished transaction replaces, has %d of its %d files, and the log is still there and not completed", recs[i].FileName(), len(fs), recs[i].NumFiles)}
			}
		}
	}
	temporary, why := newFiles, "added by the unfinished transaction"
	switch {
	case committed:
		temporary, why = oldFiles, "replaced by the committed transaction"
	case aborted:
		why = "added by the aborted transaction"
	}
	for _, fs := range temporary {
		for _, n := range fs {
			kinds[n].Kind, kinds[n].Log, kinds[n].Why = Temporary, l.Name, why
		}
	}
	return nil
}

// contained is PathUtils.isContained: path is dir or below it.
func contained(dir, path string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Cleanup removes the leftovers of every unfinished transaction in dirs
// (the same log may have a replica in each), through fsys (nil: the disk),
// as Cassandra's startup does: see txnlog.RemoveUnfinishedLeftovers. The
// error names each log that does not verify, which is left as it is.
func Cleanup(fsys vfs.FS, dirs []string) ([]txnlog.Outcome, error) {
	return txnlog.RemoveUnfinishedLeftovers(vfs.Or(fsys), dirs...)
}
