package format

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sstabletool/sstabletool/internal/format/txnlog"
)

// StagingDirPrefix starts the name of the directories sstabletool's writer
// stages files in, beside their destination (writer.NewStaging). A scan
// never takes what it finds there for data: a killed convert leaves them.
const StagingDirPrefix = ".sstabletool-staging-"

// Directory names Cassandra gives copies of a table's sstables inside its
// data directory: `nodetool snapshot` and incremental backups.
const (
	SnapshotsDir = "snapshots"
	BackupsDir   = "backups"
)

// FindOptions says what a scan for sstables enters.
type FindOptions struct {
	// Recursive descends into the subdirectories of directory arguments.
	Recursive bool
	// Snapshots and Backups include the snapshots/ and backups/ directories
	// a recursive scan otherwise skips: they hold copies of sstables that
	// are (or were) live elsewhere, not more data.
	Snapshots, Backups bool
}

// Found is one sstable a scan found, or an argument that names none.
type Found struct {
	// Path is the sstable's Data.db path; when Err is set and no sstable
	// could be named, the path the error is about.
	Path string
	// Err says why the sstable cannot be read as it is on disk (a
	// component that is not a regular file, a name that is no sstable's,
	// an argument that does not exist); nil when it can be opened.
	Err error
}

// SkipReason is why a scan left something out on purpose.
type SkipReason int

const (
	SkipSnapshots  SkipReason = iota // a snapshots/ directory
	SkipBackups                      // a backups/ directory
	SkipStaging                      // a staging directory of sstabletool's writer
	SkipUnfinished                   // an sstable a transaction log marks as not live
)

func (r SkipReason) String() string {
	switch r {
	case SkipSnapshots:
		return "snapshot directory (--snapshots includes it)"
	case SkipBackups:
		return "incremental backups directory (--backups includes it)"
	case SkipStaging:
		return "staging directory of an interrupted sstabletool convert or generate"
	case SkipUnfinished:
		return "not live data"
	}
	return fmt.Sprintf("SkipReason(%d)", int(r))
}

// Skipped is a directory or an sstable a scan left out.
type Skipped struct {
	Path   string // the directory, or the sstable's Data.db path
	Reason SkipReason
	Detail string // for SkipUnfinished: which transaction log, and why
}

// FindResult is what a scan found, in the order of its arguments and,
// within a directory, of file names.
type FindResult struct {
	SSTables []Found
	Skipped  []Skipped
}

// Failed counts the entries of SSTables with an error.
func (r *FindResult) Failed() int {
	n := 0
	for _, f := range r.SSTables {
		if f.Err != nil {
			n++
		}
	}
	return n
}

// NotRegularError is a path that is not a regular file where one is
// needed: reading a FIFO or a device would block or never end.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch m := e.Mode; {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Sprintf("%s is %s, not a regular file: an sstable component must be a regular file", e.Path, what)
}

// checkRegular returns a *NotRegularError unless fi (after symlinks) is a
// regular file.
func checkRegular(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return nil
}

// Find resolves paths into sstables: a file names the sstable it is a
// component of, a directory means every sstable in it (and in its
// subdirectories with Recursive). It never stops at a bad entry: an
// argument or sstable it cannot use is a Found with its error, and the
// scan goes on. Every component of a found sstable is checked to be a
// regular file, so that no reader blocks on a FIFO or a device.
//
// Directory scans leave out what is not live data: sstabletool's staging
// directories, Cassandra's snapshots/ and backups/ (unless asked), and the
// sstables a transaction log in their directory marks as leftovers (the
// ADD records of a transaction without a COMMIT, the REMOVE records of a
// committed one: what Cassandra deletes at startup). A path given
// explicitly is always taken as it is.
func Find(paths []string, o FindOptions) *FindResult {
	f := &finder{o: o, res: &FindResult{}, seen: map[string]bool{}}
	for _, p := range paths {
		fi, err := os.Stat(p)
		switch {
		case err != nil:
			f.fail(p, err)
		case fi.IsDir():
			f.dir(p)
		default:
			f.file(p, fi)
		}
	}
	return f.res
}

type finder struct {
	o    FindOptions
	res  *FindResult
	seen map[string]bool
}

func (f *finder) fail(path string, err error) {
	f.res.SSTables = append(f.res.SSTables, Found{Path: path, Err: err})
}

// add records the sstable of a component, once, with any of its
// components that is not a regular file as its error. odd are the
// entries of its directory that are neither regular files nor
// directories (usually none: checking only those keeps a directory of
// thousands of sstables linear).
func (f *finder) add(d Descriptor, odd []os.DirEntry) {
	dp := d.Path(ComponentData)
	if f.seen[dp] {
		return
	}
	f.seen[dp] = true
	f.res.SSTables = append(f.res.SSTables, Found{Path: dp, Err: irregularComponent(d, odd)})
}

// oddEntries are the entries that are neither regular files nor
// directories: symlinks, FIFOs, devices, sockets.
func oddEntries(entries []os.DirEntry) []os.DirEntry {
	var odd []os.DirEntry
	for _, e := range entries {
		if !e.IsDir() && !e.Type().IsRegular() {
			odd = append(odd, e)
		}
	}
	return odd
}

// irregularComponent checks the sstable's files among odd: what a symlink
// resolves to decides; a FIFO, device or socket is refused.
func irregularComponent(d Descriptor, odd []os.DirEntry) error {
	prefix := d.Prefix()
	for _, e := range odd {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		p := filepath.Join(d.Dir, e.Name())
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if err := checkRegular(p, fi); err != nil {
			return err
		}
	}
	return nil
}

// file is an explicit file argument: the sstable it is a component of.
func (f *finder) file(p string, fi fs.FileInfo) {
	if err := checkRegular(p, fi); err != nil {
		f.fail(p, err)
		return
	}
	d, _, err := ParseDescriptor(p)
	if err != nil {
		f.fail(p, err)
		return
	}
	entries, err := os.ReadDir(d.Dir)
	if err != nil {
		f.fail(p, err)
		return
	}
	f.add(d, oddEntries(entries))
}

// dir scans one directory. Only its subdirectories can be skipped: a
// directory given as an argument is scanned whatever its name.
func (f *finder) dir(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.fail(dir, err)
		return
	}
	leftovers, err := txnLeftovers(dir, entries)
	if err != nil {
		f.fail(dir, err)
	}
	odd := oddEntries(entries)
	comps := componentsByPrefix(entries)
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		if e.IsDir() {
			if !f.o.Recursive {
				continue
			}
			switch {
			case strings.HasPrefix(name, StagingDirPrefix):
				f.res.Skipped = append(f.res.Skipped, Skipped{Path: p, Reason: SkipStaging})
			case name == SnapshotsDir && !f.o.Snapshots:
				f.res.Skipped = append(f.res.Skipped, Skipped{Path: p, Reason: SkipSnapshots})
			case name == BackupsDir && !f.o.Backups:
				f.res.Skipped = append(f.res.Skipped, Skipped{Path: p, Reason: SkipBackups})
			default:
				f.dir(p)
			}
			continue
		}
		isData := strings.HasSuffix(name, "-"+ComponentData) || strings.HasSuffix(name, "-"+ComponentPartitions)
		d, _, err := ParseDescriptor(p)
		if !isData {
			// Any other component names its sstable only when Data.db
			// (or a BTI Partitions.db) is gone: what a convert killed
			// between renames, or a half-finished delete, leaves. Such
			// an sstable is reported, not passed over: Cassandra deletes
			// these orphans at startup (SortedTableScrubber). A name that
			// is no sstable's is some other file, as before.
			if err != nil || comps[d.Prefix()].data {
				continue
			}
		} else if err != nil {
			f.fail(p, err)
			continue
		}
		if why, ok := leftovers[d.Prefix()]; ok {
			dp := d.Path(ComponentData)
			if !f.seen[dp] {
				f.seen[dp] = true
				f.res.Skipped = append(f.res.Skipped, Skipped{Path: dp, Reason: SkipUnfinished, Detail: why})
			}
			continue
		}
		if !isData {
			if dp := d.Path(ComponentData); !f.seen[dp] {
				f.seen[dp] = true
				f.fail(dp, &MissingDataError{Path: dp, Components: comps[d.Prefix()].names})
			}
			continue
		}
		f.add(d, odd)
	}
}

// MissingDataError is an sstable whose other components are in a
// directory but whose Data.db is not.
type MissingDataError struct {
	Path       string   // the missing Data.db
	Components []string // the components found, in file-name order
}

func (e *MissingDataError) Error() string {
	return fmt.Sprintf("%s: required component Data.db is missing; found only %s of this sstable (Cassandra deletes such orphaned components at startup)",
		e.Path, strings.Join(e.Components, ", "))
}

// prefixComponents are the components of one sstable prefix in a directory.
type prefixComponents struct {
	names []string
	data  bool // Data.db or Partitions.db is among them
}

// componentsByPrefix groups the file names of entries by sstable prefix
// ("oa-2-big-"), split as ParseDescriptor splits them; names that are no
// sstable's land under prefixes nothing looks up.
func componentsByPrefix(entries []os.DirEntry) map[string]*prefixComponents {
	out := map[string]*prefixComponents{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		parts := strings.SplitN(e.Name(), "-", 4)
		if len(parts) != 4 {
			continue
		}
		prefix := parts[0] + "-" + parts[1] + "-" + parts[2] + "-"
		pc := out[prefix]
		if pc == nil {
			pc = &prefixComponents{}
			out[prefix] = pc
		}
		pc.names = append(pc.names, parts[3])
		pc.data = pc.data || parts[3] == ComponentData || parts[3] == ComponentPartitions
	}
	return out
}

// txnLeftovers reads the transaction logs among entries and returns the
// sstable prefixes ("nb-5-big-") they mark as not live, each with why.
// A log is the record of a compaction, flush or upgrade in progress:
// Cassandra (LogFile.removeUnfinishedLeftovers) deletes the files the
// transaction added when it did not commit, and the files it removed when
// it did.
func txnLeftovers(dir string, entries []os.DirEntry) (map[string]string, error) {
	var out map[string]string
	for _, e := range entries {
		if e.IsDir() || !txnlog.IsLogName(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Stat(p); err != nil {
			return out, err
		} else if err := checkRegular(p, fi); err != nil {
			return out, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return out, err
		}
		var adds, removes []string
		committed, aborted := false, false
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(nil, len(b)+1)
		for sc.Scan() {
			r := txnlog.ParseRecord(strings.TrimSpace(sc.Text()))
			prefix := filepath.Base(r.Path)
			if !strings.HasSuffix(prefix, "-") {
				prefix += "-"
			}
			switch r.Type {
			case txnlog.Add:
				adds = append(adds, prefix)
			case txnlog.Remove:
				removes = append(removes, prefix)
			case txnlog.Commit:
				committed = true
			case txnlog.Abort:
				aborted = true
			}
		}
		if out == nil {
			out = map[string]string{}
		}
		switch {
		case committed:
			for _, pr := range removes {
				out[pr] = fmt.Sprintf("removed by the committed transaction %s (Cassandra deletes it at startup)", e.Name())
			}
		case aborted:
			for _, pr := range adds {
				out[pr] = fmt.Sprintf("added by the aborted transaction %s (Cassandra deletes it at startup)", e.Name())
			}
		default:
			for _, pr := range adds {
				out[pr] = fmt.Sprintf("added by the unfinished transaction %s, which has no COMMIT (Cassandra deletes it at startup)", e.Name())
			}
		}
	}
	return out, nil
}
