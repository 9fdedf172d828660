package format

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// tableDirName is the name Cassandra (2.1 and later) gives a table's data
// directory, <table>-<the table id's 32 hex digits> (Directories.java:
// the table name, "-", TableId.toHexString()).
var tableDirName = regexp.MustCompile(`^(\w+)-([0-9a-f]{32})$`)

// TableOfDir is the table a table directory's name names: "users" for
// "users-5bc52802de2535edaeab188eecebb090". ok is false for any other name
// (a table directory of Cassandra before 2.1 is named as the table alone).
func TableOfDir(name string) (table string, ok bool) {
	m := tableDirName.FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// TableDir is what an sstable's directory says about its table.
type TableDir struct {
	// Dir is the table's data directory (a snapshot or backup inside it
	// resolves to it), absolute when it could be made so. For a secondary
	// index's own table it is the index's directory, <table dir>/.<index>.
	Dir      string
	Keyspace string // the parent directory's name; "" at the root
	// Table is the table's name: the directory's name without the id, or
	// the whole name when it has none. A secondary index's own table is
	// "<table>.<index>", as Cassandra names it (TableMetadata's
	// indexTableName; Descriptor gives its sstables that table name).
	Table string
	// ID is the 32 hex digits of the table id; "" when the name has none.
	// An index table has its base table's (CassandraIndex.indexCfsMetadata
	// builds it with the base's id).
	ID string
	// Index names the secondary index whose own table the directory holds
	// (Cassandra's CassandraIndex: <table>-<id>/.<index>/, and the same
	// .<index>/ inside a snapshot or backups/); "" for a table.
	Index string
}

// HasID reports whether the directory is named <table>-<id>, as Cassandra
// names every table directory: only then does it identify the table.
func (t TableDir) HasID() bool { return t.ID != "" }

// BaseTable is the table the directory belongs to: Table, or for a
// secondary index's own table the indexed table.
func (t TableDir) BaseTable() string {
	if t.Index == "" {
		return t.Table
	}
	return strings.TrimSuffix(t.Table, "."+t.Index)
}

// BaseDir is the base table's directory: Dir, or for a secondary index's
// own table the directory .<index>/ lies in.
func (t TableDir) BaseDir() string {
	if t.Index == "" {
		return t.Dir
	}
	return filepath.Dir(t.Dir)
}

// TableOf reads the keyspace and table an sstable's directory names:
// <keyspace>/<table>-<id>/, or a snapshot or backup inside one
// (<table>-<id>/snapshots/<name>/, <table>-<id>/backups/), and in any of
// them a secondary index's own table, .<index>/ (Descriptor.java's
// SSTABLE_DIR_PATTERN: <keyspace>/<table>-<id>[/backups|/snapshots/<tag>][/.<index>]/).
// A hidden directory is an index's only inside a directory named
// <table>-<id>, where Cassandra puts them.
func TableOf(dir string) TableDir {
	// An sstable named from inside its directory has the directory ".".
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	index := ""
	if ix, parent, ok := IndexTableOf(dir); ok {
		if t := tableDirOf(parent); t.HasID() {
			index, dir = ix, parent
		}
	}
	t := tableDirOf(dir)
	if index != "" {
		t.Dir = filepath.Join(t.Dir, "."+index)
		t.Table += "." + index
		t.Index = index
	}
	return t
}

// tableDirOf is TableOf for a directory that is no index's.
func tableDirOf(dir string) TableDir {
	switch {
	case filepath.Base(dir) == BackupsDir:
		dir = filepath.Dir(dir)
	case filepath.Base(filepath.Dir(dir)) == SnapshotsDir:
		dir = filepath.Dir(filepath.Dir(dir))
	}
	t := TableDir{Dir: dir, Table: filepath.Base(dir)}
	if m := tableDirName.FindStringSubmatch(t.Table); m != nil {
		t.Table, t.ID = m[1], m[2]
	}
	if ks := filepath.Base(filepath.Dir(dir)); ks != "." && ks != string(filepath.Separator) {
		t.Keyspace = ks
	}
	return t
}

// TableDirsIn lists the directories of table keyspace.table in the data
// directory dataDir, as Cassandra names them (Directories.java):
// <dataDir>/<keyspace>/<table>-<id> for each id found (a table dropped and
// created again under the same name leaves one directory per id), and
// <dataDir>/<keyspace>/<table> (before Cassandra 2.1), sorted by name.
// None is not an error; an unreadable keyspace directory is.
func TableDirsIn(dataDir, keyspace, table string) ([]TableDir, error) {
	ksDir := filepath.Join(dataDir, keyspace)
	ents, err := os.ReadDir(ksDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []TableDir
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		m := tableDirName.FindStringSubmatch(name)
		switch {
		case m != nil && m[1] == table:
			out = append(out, TableDir{Dir: filepath.Join(ksDir, name), Keyspace: keyspace, Table: table, ID: m[2]})
		case name == table:
			out = append(out, TableDir{Dir: filepath.Join(ksDir, name), Keyspace: keyspace, Table: table})
		}
	}
	return out, nil
}
