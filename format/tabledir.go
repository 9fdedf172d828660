package format

import (
	"fmt"
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

// TableDirIn finds the directory of table keyspace.table in a data
// directory (<data>/<keyspace>/<table>-<id>/, or <table>/ as before 2.1):
// what the offline tools resolve from a keyspace and a table where
// Cassandra's would read the schema. A table dropped and created again
// leaves a directory per id; the one holding sstables is the table's, and
// when several do, the error names them (give the directory instead).
func TableDirIn(dataDir, keyspace, table string) (string, error) {
	ksDir := filepath.Join(dataDir, keyspace)
	ents, err := os.ReadDir(ksDir)
	if err != nil {
		return "", fmt.Errorf("keyspace %s: %w", keyspace, err)
	}
	var dirs, withData []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if t, ok := TableOfDir(e.Name()); (ok && t == table) || e.Name() == table {
			d := filepath.Join(ksDir, e.Name())
			dirs = append(dirs, d)
			sub, _ := os.ReadDir(d)
			for _, f := range sub {
				if strings.HasSuffix(f.Name(), "-"+ComponentData) {
					withData = append(withData, d)
					break
				}
			}
		}
	}
	switch {
	case len(dirs) == 1:
		return dirs[0], nil
	case len(withData) == 1:
		return withData[0], nil
	case len(dirs) == 0:
		return "", fmt.Errorf("no directory of table %s.%s in %s (expected %s-<table id>)", keyspace, table, ksDir, filepath.Join(ksDir, table))
	case len(withData) == 0:
		return "", fmt.Errorf("table %s.%s has %d directories in %s and none holds an sstable: %s", keyspace, table, len(dirs), ksDir, strings.Join(dirs, ", "))
	}
	return "", fmt.Errorf("table %s.%s has %d directories holding sstables (a table dropped and created again keeps its old one): %s; give the table's directory instead", keyspace, table, len(withData), strings.Join(withData, ", "))
}
