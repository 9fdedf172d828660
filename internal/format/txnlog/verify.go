package txnlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Log is one transaction's log: the same file name in one or more
// directories (Cassandra writes an identical replica into every data
// directory the transaction's sstables are in).
type Log struct {
	Name     string
	Replicas []string // paths of the replica files
	// Records are the merged records (LogReplicaSet.readRecords).
	Records []Record
	// ReadErr says why the records could not be read consistently
	// (mismatched replicas, a duplicate record, a record after the final
	// one): Cassandra then refuses to touch the log and does not start.
	ReadErr string
}

// Read reads the replicas of one log (the same name in each directory)
// and merges their records as LogReplicaSet.readRecords does: line i of
// every replica must match (one may be a prefix of another only on its
// last line, where a crash cut the write short: that record is then
// partial), no record may repeat, and COMMIT or ABORT must come last.
func Read(replicas ...string) (*Log, error) {
	if len(replicas) == 0 {
		return nil, errors.New("txnlog: no replica")
	}
	l := &Log{Name: filepath.Base(replicas[0]), Replicas: replicas}
	var lines [][]string
	most := 0
	for _, p := range replicas {
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			b, err = nil, nil // readLines: a missing file has no lines
		}
		if err != nil {
			return nil, err
		}
		ls := Lines(b)
		lines = append(lines, ls)
		most = max(most, len(ls))
	}
	seen := map[key]bool{}
	for i := 0; i < most; i++ {
		first, have, partial := "", false, false
		for _, ls := range lines {
			if i >= len(ls) {
				continue
			}
			cur := ls[i]
			if !have {
				first, have = cur, true
				continue
			}
			if !strings.HasPrefix(first, cur) && !strings.HasPrefix(cur, first) {
				l.ReadErr = fmt.Sprintf("mismatched line in a replica: got %q, expected %q", cur, first)
				return l, nil
			}
			if first != cur {
				if i != len(ls)-1 {
					l.ReadErr = fmt.Sprintf("mismatched line in a replica: got %q, expected %q", cur, first)
					return l, nil
				}
				if len(cur) > len(first) {
					first = cur
				}
				partial = true
			}
		}
		r := ParseRecord(first)
		if seen[r.key()] {
			l.ReadErr = fmt.Sprintf("duplicated record %q", r.Raw)
			return l, nil
		}
		seen[r.key()] = true
		if partial && r.Err == "" {
			r.Err = "partial: the replicas differ in this last line"
		}
		l.Records = append(l.Records, r)
		if r.Type.Final() && i != most-1 {
			l.ReadErr = fmt.Sprintf("%q should have been the last record", r.Raw)
			return l, nil
		}
	}
	return l, nil
}

// File is an existing file of an sstable a record names.
type File struct {
	Path    string
	ModTime int64 // milliseconds, as java.io.File.lastModified
}

// Verdict is what Cassandra's startup concludes about a log.
type Verdict struct {
	// OK is LogFile.verify's answer: false means Cassandra refuses to start
	// ("Cannot remove temporary or obsoleted files ... due to a problem
	// with transaction log files"); Problem says why.
	OK      bool
	Problem string
	// Warning is set when only the last record is corrupt or incomplete
	// (a crash while it was written) and the rest matches the disk:
	// Cassandra carries on.
	Warning string
	// Committed: the last record is a valid COMMIT. Then the files of the
	// REMOVE records are deleted, else those of the ADD records.
	Committed bool
	// Delete lists the files cleanup deletes, in order: per record, oldest
	// modification first (LogFile.deleteRecordFiles), so that a REMOVE
	// record's newest time stays on disk until its last file goes.
	Delete []File
}

// Verify checks the log against the disk as LogFile.verify does and says
// what cleanup would delete. The files of each record are those in the
// record's directory whose names start with its prefix (the longest
// listed prefix not after the name wins, as LogRecord.getExistingFiles'
// floor lookup does).
func (l *Log) Verify() Verdict {
	if l.ReadErr != "" {
		return Verdict{Problem: l.ReadErr}
	}
	recs := make([]Record, len(l.Records))
	copy(recs, l.Records)
	files := existingFiles(recs)
	// onDisk is LogRecord.withExistingFiles for REMOVE records.
	type disk struct {
		time int64
		n    int
	}
	onDisk := make([]*disk, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.Err != "" {
			continue
		}
		if r.Checksum != r.ComputeChecksum() {
			r.Err = fmt.Sprintf("Invalid checksum for sstable [%s]: [%d] should have been [%d]", r.FileName(), r.Checksum, r.ComputeChecksum())
			continue
		}
		if r.Type != Remove {
			continue
		}
		d := &disk{}
		for _, f := range files[r.Path] {
			if f.ModTime > 0 {
				d.time = max(d.time, f.ModTime)
				d.n++
			}
		}
		onDisk[i] = d
		if truncSeconds(r.UpdateTime) != truncSeconds(d.time) && d.time > 0 {
			r.Err = fmt.Sprintf("Unexpected files detected for sstable [%s]: last update time (%d) should have been (%d)", r.FileName(), d.time, r.UpdateTime)
		}
	}
	v := Verdict{OK: true}
	bad := -1
	for i, r := range recs {
		if !r.Valid() {
			bad = i
			break
		}
	}
	if bad >= 0 {
		if bad != len(recs)-1 {
			return Verdict{Problem: fmt.Sprintf("record %d of %d is invalid: %s (%q)", bad+1, len(recs), recs[bad].Err, recs[bad].Raw)}
		}
		for i, r := range recs[:bad] {
			if r.Type == Remove && onDisk[i] != nil && onDisk[i].n < r.NumFiles {
				return Verdict{Problem: fmt.Sprintf("the last record is corrupt (%s) and sstable [%s] has %d files, not %d", recs[bad].Err, r.FileName(), onDisk[i].n, r.NumFiles)}
			}
		}
		v.Warning = fmt.Sprintf("last record is corrupt or incomplete (%s), but all previous records match the disk", recs[bad].Err)
	}
	if n := len(recs); n > 0 && recs[n-1].Type == Commit && recs[n-1].Valid() {
		v.Committed = true
	}
	want := Add
	if v.Committed {
		want = Remove
	}
	done := map[string]bool{}
	for _, r := range recs {
		if r.Type != want || done[r.Path] {
			continue
		}
		done[r.Path] = true
		fs := append([]File(nil), files[r.Path]...)
		sort.SliceStable(fs, func(a, b int) bool { return fs[a].ModTime < fs[b].ModTime })
		v.Delete = append(v.Delete, fs...)
	}
	return v
}

// truncSeconds is LogFile.truncateMillis: times compare to the second (a
// JDK 8 writer stored seconds).
func truncSeconds(ms int64) int64 { return ms - ms%1000 }

// existingFiles is LogRecord.getExistingFiles: the files on disk of each
// record's path. A name belongs to the greatest prefix of its directory
// that sorts at or before it, if that prefix starts it.
func existingFiles(recs []Record) map[string][]File {
	byDir := map[string][]string{}
	for _, r := range recs {
		if !r.Type.hasFile() || r.Path == "" {
			continue
		}
		clean := filepath.Clean(r.Path)
		dir, base := filepath.Dir(clean), filepath.Base(clean)
		byDir[dir] = append(byDir[dir], base)
	}
	out := map[string][]File{}
	for dir, prefixes := range byDir {
		sort.Strings(prefixes)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // tryList: an unreadable or missing directory has no files
		}
		for _, e := range ents {
			name := e.Name()
			i := sort.SearchStrings(prefixes, name)
			// floor: the greatest prefix <= name.
			if i == len(prefixes) || prefixes[i] != name {
				i--
			}
			if i < 0 || !strings.HasPrefix(name, prefixes[i]) {
				continue
			}
			p := filepath.Join(dir, name)
			var mt int64
			if fi, err := os.Stat(p); err == nil {
				mt = JavaModTime(fi)
			}
			full := filepath.Join(dir, prefixes[i])
			out[full] = append(out[full], File{Path: p, ModTime: mt})
		}
	}
	return out
}

// JavaModTime is java.io.File.lastModified: milliseconds, truncated.
func JavaModTime(fi fs.FileInfo) int64 { return fi.ModTime().UnixMilli() }

// FindLogs lists the logs in dirs by name, each with its replicas in the
// order of dirs (LogTransaction.LogFilesByName).
func FindLogs(dirs ...string) ([]*Log, error) {
	byName := map[string][]string{}
	var names []string
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !IsLogName(e.Name()) {
				continue
			}
			if _, ok := byName[e.Name()]; !ok {
				names = append(names, e.Name())
			}
			byName[e.Name()] = append(byName[e.Name()], filepath.Join(d, e.Name()))
		}
	}
	sort.Strings(names)
	var out []*Log
	for _, n := range names {
		l, err := Read(byName[n]...)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Outcome is what RemoveUnfinishedLeftovers did with one log.
type Outcome struct {
	Log     *Log
	Verdict Verdict
	Deleted []string
}

// Disk is the changes a cleanup makes: internal/vfs's FS is one (the
// format layer does not import it, so the caller passes it in).
type Disk interface {
	Remove(name string) error
	SyncDir(dir string) error
}

// RemoveUnfinishedLeftovers does what Cassandra's startup does in a
// table's directories (ColumnFamilyStore.scrubDataDirectories ->
// LogTransaction.removeUnfinishedLeftovers), through d: every log that
// verifies is cleaned up as LogFile.removeUnfinishedLeftovers does (its
// directories fsynced, its REMOVE files deleted if committed, else its
// ADD files, each record's oldest first, the directories fsynced again,
// then each replica deleted and its directory fsynced). A log that does
// not verify is left as it is and reported in the error, as Cassandra
// reports it before refusing to start; the other logs are still cleaned.
func RemoveUnfinishedLeftovers(d Disk, dirs ...string) ([]Outcome, error) {
	logs, err := FindLogs(dirs...)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	var problems []string
	for _, l := range logs {
		v := l.Verify()
		o := Outcome{Log: l, Verdict: v}
		if !v.OK {
			problems = append(problems, fmt.Sprintf("%s: %s", l.Name, v.Problem))
			out = append(out, o)
			continue
		}
		syncAll := func() error {
			for _, r := range l.Replicas {
				if err := d.SyncDir(filepath.Dir(r)); err != nil {
					return err
				}
			}
			return nil
		}
		if err := syncAll(); err != nil {
			return out, err
		}
		for _, f := range v.Delete {
			if err := d.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return out, err
			}
			o.Deleted = append(o.Deleted, f.Path)
		}
		if err := syncAll(); err != nil {
			return out, err
		}
		for _, r := range l.Replicas {
			if err := d.Remove(r); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return out, err
			}
			if err := d.SyncDir(filepath.Dir(r)); err != nil {
				return out, err
			}
		}
		out = append(out, o)
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("cannot remove temporary or obsoleted files due to a problem with transaction log files: %s", strings.Join(problems, "; "))
	}
	return out, nil
}
