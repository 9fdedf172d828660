// Package statsedit changes the few fields of an sstable's Statistics.db
// that Cassandra's offline tools change, the way they change them
// (io/sstable/metadata/MetadataSerializer.java: mutateLevel,
// mutateRepairMetadata, both through mutate and rewriteSSTableMetadata):
// the whole file is decoded, the stats component's sstableLevel, or its
// repairedAt, pendingRepair and isTransient, replaced, the file encoded
// again into "<Statistics.db>.tmp" and renamed over the original.
// sstablerepairedset, sstablelevelreset and sstableofflinerelevel are
// built on it; so are sstabletool's repaired-set, level-reset and relevel.
//
// Cassandra re-serializes everything; format/stats encodes byte for byte
// what it decodes, so the new file differs from the old only in those
// fields and the stats component's CRC32 (and, where a pending repair id
// is added or removed, in the 16 bytes it takes, the serialization
// header's offset in the table of contents and that table's CRC32). Before
// it writes, Mutate checks that: a file it would not re-encode exactly is
// refused, never rewritten. Unlike Cassandra it fsyncs the new file
// before the rename and the directory after it, and it keeps the file's
// mode and owner; every change to the disk goes through internal/vfs.
package statsedit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/reader"
)

// TmpSuffix is what Descriptor.tmpFileFor adds to the component's name
// for the file a mutate writes before its rename (Descriptor.TMP_EXT).
const TmpSuffix = ".tmp"

// Fields are the values a mutate may change.
type Fields struct {
	Level      int32 `json:"level"`
	RepairedAt int64 `json:"repaired_at"` // milliseconds; 0: unrepaired
	// PendingRepair is the incremental repair session the sstable is
	// pending in (na and later); nil when none.
	PendingRepair *stats.UUID `json:"pending_repair,omitempty"`
	IsTransient   bool        `json:"is_transient"` // na and later
}

func fieldsOf(s *stats.Stats) Fields {
	return Fields{Level: s.Level, RepairedAt: s.RepairedAt, PendingRepair: s.PendingRepair, IsTransient: s.IsTransient}
}

// Change is one mutate: a nil field is left as it is.
type Change struct {
	// Level is StatsMetadata.mutateLevel's new level.
	Level *int32
	// Repair is StatsMetadata.mutateRepairedMetadata's three values,
	// set together (its Level is ignored).
	Repair *Fields
}

// Result is what Mutate did to one sstable's Statistics.db.
type Result struct {
	Path   string `json:"statistics"` // Statistics.db
	Before Fields `json:"before"`
	After  Fields `json:"after"`
	// Changed is false when the file already held the new values: it was
	// left untouched.
	Changed bool `json:"changed"`
}

// Read decodes the fields Mutate changes from d's Statistics.db.
func Read(d format.Descriptor) (Fields, error) {
	path := d.Path(format.ComponentStatistics)
	_, st, err := load(path, d.Version)
	if err != nil {
		return Fields{}, err
	}
	return fieldsOf(st.Stats), nil
}

// load reads and decodes a Statistics.db that has a stats component.
func load(path string, v format.Version) ([]byte, *stats.Statistics, error) {
	orig, err := reader.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := stats.Decode(orig, v)
	if err != nil {
		return nil, nil, corrupt.WithFile(err, path)
	}
	if st.Stats == nil {
		return nil, nil, fmt.Errorf("%s: no stats metadata component (the table of contents lists none)", path)
	}
	return orig, st, nil
}

// Mutate applies ch to d's Statistics.db through fsys (nil: the disk).
// Nothing is written when the file already holds the new values. A file
// that format/stats does not encode back to the very same bytes, or a
// value the version cannot store (a pending repair or transient flag
// before na), is an error and the file is left as it is.
func Mutate(fsys vfs.FS, d format.Descriptor, ch Change) (*Result, error) {
	fsys = vfs.Or(fsys)
	path := d.Path(format.ComponentStatistics)
	orig, st, err := load(path, d.Version)
	if err != nil {
		return nil, err
	}
	again, err := st.Encode(d.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !bytes.Equal(again, orig) {
		return nil, fmt.Errorf("%s: refusing to rewrite it: re-encoded, the file would differ from what is on disk at byte %d (%d bytes, %d re-encoded), not only in the fields to change", path, firstDiff(again, orig), len(orig), len(again))
	}
	res := &Result{Path: path, Before: fieldsOf(st.Stats)}
	s := st.Stats
	if ch.Level != nil {
		s.Level = *ch.Level
	}
	if r := ch.Repair; r != nil {
		if !d.Version.HasPendingRepair && r.PendingRepair != nil {
			return nil, fmt.Errorf("%s: version %s stores no pending repair (na and later do)", path, d.Version.Name)
		}
		if !d.Version.HasIsTransient && r.IsTransient {
			return nil, fmt.Errorf("%s: version %s stores no transient flag (na and later do)", path, d.Version.Name)
		}
		s.RepairedAt, s.PendingRepair, s.IsTransient = r.RepairedAt, r.PendingRepair, r.IsTransient
	}
	res.After = fieldsOf(s)
	out, err := st.Encode(d.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, orig) {
		return res, nil
	}
	if err := Replace(fsys, path, out); err != nil {
		return nil, err
	}
	res.Changed = true
	return res, nil
}

// Replace writes data over the component at path as
// rewriteSSTableMetadata does, into path+TmpSuffix renamed over it; the
// new file is fsynced before the rename and the directory after it, and
// it takes the old file's mode and owner. A kill at any moment leaves
// either the old file or the new one under the name (and at worst the
// temporary file beside it, which the next Replace overwrites and
// Cassandra's startup deletes).
func Replace(fsys vfs.FS, path string, data []byte) (err error) {
	fsys = vfs.Or(fsys)
	fi, err := fsys.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + TmpSuffix
	// A temporary file a killed run left: Cassandra overwrites it too.
	if err := fsys.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := fsys.Create(tmp, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			fsys.Remove(tmp)
		}
	}()
	if err := vfs.OwnerOf(fi).Give(f); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return err
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("fsync directory %s: %w", filepath.Dir(path), err)
	}
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
