package format

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
	// resolves to it), absolute when it could be made so.
	Dir      string
	Keyspace string // the parent directory's name; "" at the root
	// Table is the table's name: the directory's name without the id, or
	// the whole name when it has none.
	Table string
	ID    string // the 32 hex digits of the table id; "" when the name has none
}

// HasID reports whether the directory is named <table>-<id>, as Cassandra
// names every table directory: only then does it identify the table.
func (t TableDir) HasID() bool { return t.ID != "" }

// TableOf reads the keyspace and table an sstable's directory names:
// <keyspace>/<table>-<id>/, or a snapshot or backup inside one
// (<table>-<id>/snapshots/<name>/, <table>-<id>/backups/).
func TableOf(dir string) TableDir {
	// An sstable named from inside its directory has the directory ".".
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
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
